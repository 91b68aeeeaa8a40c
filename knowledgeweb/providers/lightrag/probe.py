"""LightRAG's connection test: a one-hit ``naive`` search, the smallest request its key guards.

``/health`` answers without a key (docs/providers.md), so it would call a wrong key fine.
"""

from __future__ import annotations

from typing import Any

from knowledgeweb.providers.lightrag.adapter import DOCUMENT_TOOL, LightragProvider, lightrag_connection
from knowledgeweb.providers.spec import ProviderRequest

QUERY = "connection test"


def lightrag_probe(binding: Any, request: ProviderRequest) -> str:
    """One ``POST /query/data`` in ``naive`` mode (chunks only: the query embedded, no LLM call), ``top_k`` 1."""
    connection = lightrag_connection(
        base_url=binding.base_url, api_key=request.api_key or "", timeout=request.timeout
    )
    result = LightragProvider(connection=connection, mode="naive").search(QUERY, tool=DOCUMENT_TOOL, top_k=1)
    found = "found a passage" if result.hits else "found nothing for a test query (an empty workspace?)"
    return f"LightRAG answered and accepted the key; a one-hit search {found}."
