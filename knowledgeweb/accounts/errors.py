"""Errors of the accounts app."""

from __future__ import annotations


class TokenInvalidError(ValueError):
    """A token could not be issued as asked (for example, a name that is too long)."""
