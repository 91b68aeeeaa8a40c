"""library app."""
