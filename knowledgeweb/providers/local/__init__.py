"""The local index\x27s name and selection rules; the index itself (and its spec) is the library app."""
