"""Credential redaction for everything that leaves an adapter.

Two strengths: ``text``/``json`` remove the credential's exact value (safe for
retrieved evidence, which must otherwise stay byte-for-byte as the provider sent
it); ``message`` also blanks any ``Authorization`` / ``X-API-Key`` header value,
for error messages and log lines where no evidence fidelity is at stake.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

REDACTED = "[redacted]"

_HEADER_VALUE = re.compile(
    r"(?i)(\b(?:authorization|x-api-key)\b[\"']?\s*[:=]\s*[\"']?)(?:bearer\s+)?[^\s\"',;}]+"
)
_BEARER_TOKEN = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}")


class Redactor:
    """Removes known secret values (and, for messages, header values) from text."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        variants: set[str] = set()
        for secret in secrets:
            if secret:
                # A key can also surface URL-encoded, e.g. echoed back inside a query string.
                variants.update({secret, quote(secret, safe=""), quote(secret)})
        # Longest first so a key that contains another key is removed whole.
        self._secrets = sorted(variants, key=len, reverse=True)

    def text(self, value: str) -> str:
        """Remove every known secret value."""
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value

    def message(self, value: str) -> str:
        """Remove secret values and any credential header value (for errors and logs)."""
        value = self.text(value)
        value = _HEADER_VALUE.sub(lambda match: match.group(1) + REDACTED, value)
        return _BEARER_TOKEN.sub(lambda match: match.group(1) + REDACTED, value)

    def json(self, value: Any) -> Any:
        """Redact every string (keys included) in decoded JSON."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(item) for item in value]
        if isinstance(value, dict):
            return {self.text(str(key)): self.json(item) for key, item in value.items()}
        return value
