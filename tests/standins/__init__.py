"""Deterministic stand-ins for services the tests cannot reach (written here, not mocks of our code)."""
