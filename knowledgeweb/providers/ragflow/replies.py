"""How RAGFlow signals success and failure (docs/providers.md, "Errors" and "Authentication")."""

from __future__ import annotations

from typing import Any

from knowledgeweb.providers.client import Reply, detail_of
from knowledgeweb.providers.errors import (
    MalformedResponseError,
    ProviderAuthError,
    ProviderHTTPError,
    ProviderRejectedError,
)

#: RAGFlow's code for a bad API key up to v0.25, and its code from v0.26.
AUTH_CODES = frozenset({109, 401})


def ragflow_data(reply: Reply, *, action: str) -> Any:
    """Return ``data`` from a successful RAGFlow answer; raise a clear error otherwise.

    RAGFlow usually reports errors as HTTP 200 with a non-zero ``code``, so the
    code is checked whatever the HTTP status.
    """
    body = reply.body
    code = body.get("code") if isinstance(body, dict) else None
    detail = detail_of(body, "message")
    if reply.status == 401 or (isinstance(code, int) and code in AUTH_CODES):
        raise ProviderAuthError(
            "RAGFlow rejected the API key (authentication failed)" + (f": {detail}" if detail else ".")
        )
    if reply.status >= 400:
        raise ProviderHTTPError(
            f"RAGFlow answered HTTP {reply.status} to the {action}" + (f": {detail}" if detail else "."),
            status=reply.status,
        )
    if not isinstance(body, dict) or not isinstance(code, int) or isinstance(code, bool):
        raise MalformedResponseError(f"RAGFlow's answer to the {action} has no numeric 'code'.")
    if code != 0:
        raise ProviderRejectedError(
            f"RAGFlow refused the {action} (code {code})" + (f": {detail}" if detail else ".")
        )
    return body.get("data")
