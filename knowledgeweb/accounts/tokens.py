"""Personal API token format and hashing, shared by the service and the authenticator."""

from __future__ import annotations

import hashlib
import secrets

#: Every token starts with this, so a leaked one is easy to recognise in a scan.
TOKEN_PREFIX = "kwt_"  # noqa: S105 - a public marker, not a secret
#: How many leading characters of a token are kept, to tell tokens apart.
VISIBLE_PREFIX_LENGTH = 12


def token_generate() -> str:
    """A new random token (256 bits of entropy)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_digest(raw: str) -> str:
    """The stored form of a token.

    A plain SHA-256 is enough: the token is random and long, so there is
    nothing for a slow password hash to protect against.
    """
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()
