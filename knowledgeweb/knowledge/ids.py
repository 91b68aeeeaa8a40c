"""Source ids and the handles citations point at (docs/contract.md#source-records)."""

from __future__ import annotations

import hashlib
import json

ID_NAMESPACE = "knowledgeweb.source.v1"
SHARED_HANDLE_PREFIX = "knowledge-source-"
NATIVE_HANDLE_PREFIX = "knowledge-"


def source_id(
    provider: str,
    title: str,
    excerpt: str,
    dataset_name: str | None = None,
    url: str | None = None,
    page: int | None = None,
) -> str:
    """The opaque id of a shared source record.

    SHA-256 over the UTF-8 JSON array
    ``["knowledgeweb.source.v1", provider, title, excerpt, dataset_name, url, page]``
    (absent fields are ``null``), serialized with ``ensure_ascii=False`` and
    separators ``(",", ":")``; the id is the first 32 hex characters. Any change
    to the evidence changes the id, which is how readers detect forgery.
    """
    payload = json.dumps(
        [ID_NAMESPACE, provider, title, excerpt, dataset_name, url, page],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


def shared_handle(record_id: str) -> str:
    """``knowledge-source-<id>``: the fragment a shared citation points at."""
    return SHARED_HANDLE_PREFIX + record_id


def native_handle(record_id: str) -> str:
    """``knowledge-<32hex>-<N>``: the fragment a native RAGFlow citation points at."""
    return NATIVE_HANDLE_PREFIX + record_id
