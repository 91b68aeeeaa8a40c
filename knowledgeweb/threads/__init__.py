"""threads app."""
