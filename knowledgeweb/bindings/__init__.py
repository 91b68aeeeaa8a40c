"""bindings app."""
