"""The local index as a provider: its spec and selection rules. The index itself is the library app."""
