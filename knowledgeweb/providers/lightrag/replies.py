"""How LightRAG signals success, "nothing found" and failure (docs/providers.md, LightRAG)."""

from __future__ import annotations

from typing import Any

from knowledgeweb.providers.client import Reply, detail_of
from knowledgeweb.providers.errors import (
    MalformedResponseError,
    ProviderAuthError,
    ProviderHTTPError,
    ProviderRejectedError,
)

#: The messages LightRAG uses for an empty result (mix/hybrid modes, naive mode).
_NO_RESULT_MESSAGES = frozenset({"Query returned no results", "No relevant document chunks found."})


def lightrag_data(reply: Reply) -> dict[str, Any] | None:
    """``data`` of a successful answer, ``None`` when nothing was found; raise otherwise."""
    body = reply.body
    detail = detail_of(body, "detail", "message")
    if reply.status in {401, 403}:
        raise ProviderAuthError(
            f"LightRAG rejected the API key (HTTP {reply.status})" + (f": {detail}" if detail else ".")
        )
    if reply.status in {400, 422}:
        raise ProviderRejectedError(
            "LightRAG rejected the query as invalid" + (f": {detail}" if detail else ".")
        )
    if reply.status >= 400 or not 200 <= reply.status < 300:
        raise ProviderHTTPError(
            f"LightRAG answered HTTP {reply.status}" + (f": {detail}" if detail else "."), status=reply.status
        )
    if not isinstance(body, dict):
        raise MalformedResponseError("LightRAG's answer is not a JSON object.")
    status = body.get("status")
    if status == "failure":
        metadata = body.get("metadata")
        reason = metadata.get("failure_reason") if isinstance(metadata, dict) else None
        if reason == "no_results" or body.get("message") in _NO_RESULT_MESSAGES:
            return None
        raise ProviderRejectedError(
            "LightRAG could not answer the query" + (f": {detail}" if detail else ".")
        )
    if status != "success":
        raise MalformedResponseError("LightRAG's answer has no 'success' or 'failure' status.")
    data = body.get("data")
    if not isinstance(data, dict):
        raise MalformedResponseError("LightRAG's answer has no 'data' object.")
    for key in ("entities", "relationships", "chunks", "references"):
        if not isinstance(data.get(key, []), list):
            raise MalformedResponseError(f"LightRAG's 'data.{key}' is not a list.")
    return data
