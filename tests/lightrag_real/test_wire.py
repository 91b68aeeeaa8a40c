"""The hand-written LightRAG payloads in ``tests/synthetic.py`` against the real 1.5.7 server.

The unit tests trust those builders; here every builder is compared with what the real
server answers, shape and value, so a fake cannot drift from the wire and a wire change in
a future LightRAG release fails here instead of in a user's search.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.lightrag_real.conftest import API_KEY
from tests.lightrag_real.servers import LightragServer
from tests.synthetic import (
    synthetic_lightrag_chunk,
    synthetic_lightrag_entity,
    synthetic_lightrag_no_results,
    synthetic_lightrag_relationship,
    synthetic_lightrag_success,
    synthetic_lightrag_validation_error,
)

pytestmark = pytest.mark.real_lightrag

QUESTION = "Who founded the Meridian Observatory?"
MODES = ["local", "global", "hybrid", "naive", "mix"]


def shape(value: Any) -> Any:
    """Keys and value types, recursively; lists by the shape of their first item."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__


def post(server: LightragServer, body: dict[str, Any], *, key: str | None = API_KEY) -> httpx.Response:
    headers = {"X-API-Key": key} if key is not None else {}
    with httpx.Client(base_url=server.base_url, headers=headers, timeout=60, trust_env=False) as client:
        return client.post("/query/data", json=body)


@pytest.mark.parametrize("mode", MODES)
def test_the_synthetic_success_body_has_the_real_shape(lightrag_server: LightragServer, mode: str) -> None:
    real = post(lightrag_server, {"query": QUESTION, "mode": mode}).json()
    data = real["data"]
    synthetic = synthetic_lightrag_success(
        mode=mode,
        chunks=[synthetic_lightrag_chunk("doc-1-chunk-000", "Synthetic text.")],
        entities=[synthetic_lightrag_entity("Acme", "Synthetic.", "doc-1-chunk-000")]
        if data["entities"]
        else None,
        relationships=[synthetic_lightrag_relationship("A", "B", "Synthetic.", "doc-1-chunk-000")]
        if data["relationships"]
        else None,
    )
    assert shape(synthetic) == shape(real)
    assert (real["status"], real["message"]) == (synthetic["status"], synthetic["message"])
    assert real["metadata"]["query_mode"] == mode
    # The stand-in model names types in title case ("Organization"); LightRAG stores them lower-cased.
    assert all(e["entity_type"] == e["entity_type"].lower() for e in data["entities"])
    assert all(isinstance(r["weight"], float) for r in data["relationships"])


def test_the_synthetic_references_are_numbered_as_the_server_numbers_them(
    lightrag_server: LightragServer,
) -> None:
    real = post(lightrag_server, {"query": QUESTION, "mode": "mix"}).json()["data"]
    chunks = [
        synthetic_lightrag_chunk(c["chunk_id"], c["content"], c["file_path"], reference_id="?")
        for c in real["chunks"]
    ]
    rebuilt = synthetic_lightrag_success(chunks=chunks)["data"]
    assert rebuilt["references"] == real["references"]
    assert rebuilt["chunks"] == real["chunks"]


@pytest.mark.parametrize("mode", MODES)
def test_the_synthetic_no_results_body_is_the_real_one(lightrag_server: LightragServer, mode: str) -> None:
    response = post(lightrag_server, {"query": "quantum marmalade saxophone", "mode": mode})
    assert (response.status_code, response.json()) == (200, synthetic_lightrag_no_results(mode))


def test_a_query_without_keywords_finds_nothing(lightrag_server: LightragServer) -> None:
    """The stand-in finds no keyword in stop words; LightRAG then answers "nothing found"."""
    response = post(lightrag_server, {"query": "what is it?", "mode": "mix"})
    assert (response.status_code, response.json()) == (200, synthetic_lightrag_no_results("mix"))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"query": "ab", "mode": "mix"},
            "body: Value error, RAG query is too short. Enter at least 3 English characters or an "
            "equivalent combination where each Chinese, Japanese or Korean character counts as 2.",
        ),
        ({"query": "   ", "mode": "naive"}, "body -> query: Value error, Query must not be empty."),
        (
            {"query": QUESTION, "mode": "sideways"},
            "body -> mode: Input should be 'local', 'global', 'hybrid', 'naive', 'mix' or 'bypass'",
        ),
        ({"query": QUESTION, "top_k": 1001}, "body -> top_k: Input should be less than or equal to 1000"),
        (
            {"query": QUESTION, "chunk_top_k": 0},
            "body -> chunk_top_k: Input should be greater than or equal to 1",
        ),
    ],
)
def test_the_synthetic_validation_error_is_the_real_one(
    lightrag_server: LightragServer, body: dict[str, Any], message: str
) -> None:
    response = post(lightrag_server, body)
    assert (response.status_code, response.json()) == (400, synthetic_lightrag_validation_error(message))


@pytest.mark.parametrize("query", ["a b", "东京"])
def test_the_minimum_counts_inner_spaces_and_east_asian_characters_twice(
    lightrag_server: LightragServer, query: str
) -> None:
    response = post(lightrag_server, {"query": query, "mode": "naive"})
    assert response.status_code == 200
    assert response.json()["metadata"].get("failure_reason") in {None, "no_results"}


def test_bypass_mode_skips_the_minimum_and_returns_empty_lists(lightrag_server: LightragServer) -> None:
    response = post(lightrag_server, {"query": "ab", "mode": "bypass"})
    assert response.status_code == 200
    assert response.json()["data"] == {"entities": [], "relationships": [], "chunks": [], "references": []}


@pytest.mark.parametrize(("key", "detail"), [(None, "API Key required"), ("not-the-key", "Invalid API Key")])
def test_a_missing_or_wrong_key_is_http_403_with_its_detail(
    lightrag_server: LightragServer, key: str | None, detail: str
) -> None:
    response = post(lightrag_server, {"query": QUESTION}, key=key)
    assert (response.status_code, response.json()) == (403, {"detail": detail})


def test_a_bearer_token_is_not_the_api_key(lightrag_server: LightragServer) -> None:
    with httpx.Client(base_url=lightrag_server.base_url, timeout=60, trust_env=False) as client:
        response = client.post(
            "/query/data", json={"query": QUESTION}, headers={"Authorization": f"Bearer {API_KEY}"}
        )
    assert (response.status_code, response.json()) == (401, {"detail": "Invalid token"})


def test_health_answers_without_a_key(lightrag_server: LightragServer) -> None:
    with httpx.Client(base_url=lightrag_server.base_url, timeout=10, trust_env=False) as client:
        response = client.get("/health")
    assert response.status_code == 200
    assert response.json()["core_version"] == "1.5.7"
