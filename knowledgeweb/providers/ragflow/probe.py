"""RAGFlow's connection test: the first page of one dataset, which any valid key may list."""

from __future__ import annotations

from typing import Any

from knowledgeweb.providers.client import ProviderSession
from knowledgeweb.providers.errors import MalformedResponseError
from knowledgeweb.providers.ragflow.adapter import ragflow_connection
from knowledgeweb.providers.ragflow.replies import ragflow_data
from knowledgeweb.providers.spec import ProviderRequest

ACTION = "dataset list request"


def ragflow_probe(binding: Any, request: ProviderRequest) -> str:
    """One ``GET /api/v1/datasets?page=1&page_size=1``: checks the address, the key and the answer's shape."""
    connection = ragflow_connection(
        base_url=binding.base_url, api_key=request.api_key or "", timeout=request.timeout
    )
    with ProviderSession(connection) as session:
        data = ragflow_data(
            session.get("/api/v1/datasets", params={"page": 1, "page_size": 1}, action=ACTION), action=ACTION
        )
    if not isinstance(data, list):
        raise MalformedResponseError("RAGFlow's dataset list is not a list.")
    if not data:
        return (
            "RAGFlow answered and accepted the key, but the key sees no dataset: searches will find nothing."
        )
    return "RAGFlow answered and accepted the key, which sees at least one dataset."
