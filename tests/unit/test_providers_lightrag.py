"""LightRAG knowledge_search over /query/data: chunks, reference joins, errors (synthetic payloads)."""

from __future__ import annotations

from dataclasses import replace

import httpx
import pytest

from knowledgeweb.knowledge import format_result, read_sources
from knowledgeweb.knowledge.types import RetrievalResult
from knowledgeweb.providers.errors import (
    MalformedResponseError,
    ProviderAuthError,
    ProviderHTTPError,
    ProviderRejectedError,
    UnsupportedToolError,
)
from knowledgeweb.providers.lightrag import LightragProvider, lightrag_connection
from tests.synthetic import (
    LIGHTRAG_KEY,
    LIGHTRAG_URL,
    Upstream,
    lightrag_routes,
    synthetic_lightrag_chunk,
    synthetic_lightrag_entity,
    synthetic_lightrag_no_results,
    synthetic_lightrag_relationship,
    synthetic_lightrag_success,
    synthetic_lightrag_validation_error,
)


def provider(upstream: Upstream) -> LightragProvider:
    connection = lightrag_connection(base_url=LIGHTRAG_URL, api_key=LIGHTRAG_KEY, timeout=5)
    return LightragProvider(connection=replace(connection, transport=upstream.transport))


def search(upstream: Upstream, query: str = "who founded acme?", top_k: int = 20) -> RetrievalResult:
    return provider(upstream).search(query, tool="knowledge_search", top_k=top_k)


def test_it_posts_the_query_in_mix_mode_with_the_api_key_header() -> None:
    upstream = Upstream(lightrag_routes(synthetic_lightrag_success()))
    search(upstream, top_k=12)
    (request,) = upstream.requests
    assert (request.method, request.url.path) == ("POST", "/query/data")
    assert request.headers["X-API-Key"] == LIGHTRAG_KEY
    assert "Authorization" not in request.headers
    assert upstream.bodies("/query/data") == [
        {"query": "who founded acme?", "mode": "mix", "top_k": 12, "chunk_top_k": 12}
    ]


def test_chunks_become_titled_hits_without_page_url_or_dataset() -> None:
    body = synthetic_lightrag_success(
        chunks=[synthetic_lightrag_chunk("doc-1-chunk-000", "Synthetic: Acme was founded by Alice in 1999.")]
    )
    result = search(Upstream(lightrag_routes(body)))
    (hit,) = result.hits
    assert (hit.kind, hit.title, hit.text) == (
        "document",
        "acme.txt",
        "Synthetic: Acme was founded by Alice in 1999.",
    )
    assert (hit.page, hit.url, hit.dataset_name, hit.locator) == (None, None, None, None)
    assert (result.provider, result.tool) == ("lightrag", "knowledge_search")


def test_a_missing_file_path_is_joined_through_reference_id() -> None:
    chunk = synthetic_lightrag_chunk("doc-2-chunk-000", "Synthetic: Bob runs sales.", reference_id="2")
    del chunk["file_path"]
    body = synthetic_lightrag_success(
        chunks=[chunk],
        references=[
            {"reference_id": "1", "file_path": "acme.txt"},
            {"reference_id": "2", "file_path": "people.md"},
        ],
    )
    assert search(Upstream(lightrag_routes(body))).hits[0].title == "people.md"


@pytest.mark.parametrize(
    ("file_path", "reference_id"),
    [("unknown_source", ""), ("unknown_source", "1"), ("", ""), ("", "1"), ("   ", "1")],
)
def test_unknown_source_and_empty_paths_are_unattributed(file_path: str, reference_id: str) -> None:
    chunk = synthetic_lightrag_chunk("doc-3-chunk-000", "Synthetic orphan text.", file_path, reference_id)
    body = synthetic_lightrag_success(
        chunks=[chunk], references=[{"reference_id": "1", "file_path": "acme.txt"}]
    )
    result = search(Upstream(lightrag_routes(body)))
    assert result.hits[0].title is None
    content, artifact = format_result(result)
    assert "Unattributed text (no citable source)\nSynthetic orphan text." in content
    assert artifact["knowledge_sources"] == []


def test_a_null_file_path_is_joined_through_reference_id_like_a_missing_one() -> None:
    chunk = synthetic_lightrag_chunk("doc-2-chunk-000", "Synthetic: Bob runs sales.", reference_id="1")
    chunk["file_path"] = None
    body = synthetic_lightrag_success(
        chunks=[chunk], references=[{"reference_id": "1", "file_path": "people.md"}]
    )
    assert search(Upstream(lightrag_routes(body))).hits[0].title == "people.md"


def test_a_reference_id_with_no_reference_stays_unattributed() -> None:
    chunk = synthetic_lightrag_chunk("doc-4-chunk-000", "Synthetic text.", reference_id="9")
    del chunk["file_path"]
    body = synthetic_lightrag_success(chunks=[chunk], references=[])
    assert search(Upstream(lightrag_routes(body))).hits[0].title is None


def test_entities_and_relationships_never_become_document_citations() -> None:
    body = synthetic_lightrag_success(
        entities=[synthetic_lightrag_entity("Acme", "Synthetic: a company.", "doc-1-chunk-000")],
        relationships=[
            synthetic_lightrag_relationship("Alice", "Acme", "Synthetic: founded", "doc-1-chunk-000")
        ],
    )
    result = search(Upstream(lightrag_routes(body)))
    assert result.hits == ()


def test_the_formatted_result_cites_each_titled_chunk_and_reads_back() -> None:
    body = synthetic_lightrag_success(
        chunks=[
            synthetic_lightrag_chunk("doc-1-chunk-000", "Synthetic: Acme was founded by Alice."),
            synthetic_lightrag_chunk("doc-2-chunk-000", "Synthetic: Bob runs sales.", "people.md", "2"),
        ]
    )
    content, artifact = format_result(search(Upstream(lightrag_routes(body))))
    sources = read_sources("knowledge_search", content, artifact)
    assert sorted((e.title, e.excerpt) for e in sources.values()) == [
        ("acme.txt", "Synthetic: Acme was founded by Alice."),
        ("people.md", "Synthetic: Bob runs sales."),
    ]
    assert all(e.url is None and e.page is None for e in sources.values())


def test_top_k_bounds_the_hits() -> None:
    chunks = [synthetic_lightrag_chunk(f"doc-1-chunk-{i:03d}", f"Synthetic part {i}.") for i in range(5)]
    assert (
        len(search(Upstream(lightrag_routes(synthetic_lightrag_success(chunks=chunks))), top_k=3).hits) == 3
    )


def test_no_results_is_an_empty_result_not_an_error() -> None:
    result = search(Upstream(lightrag_routes(synthetic_lightrag_no_results("mix"))))
    assert result.hits == ()
    assert format_result(result)[0] == "Knowledge search results from lightrag: nothing found."


def test_the_naive_mode_no_results_message_is_also_empty() -> None:
    assert search(Upstream(lightrag_routes(synthetic_lightrag_no_results("naive")))).hits == ()


def test_the_naive_mode_message_alone_still_reads_as_empty() -> None:
    # The message alone is enough, even from a server that leaves out ``failure_reason``.
    body = {"status": "failure", "message": "No relevant document chunks found.", "data": {}, "metadata": {}}
    assert search(Upstream(lightrag_routes(body))).hits == ()


@pytest.mark.parametrize("detail", ["API Key required", "Invalid API Key"])
def test_http_403_is_an_authentication_failure(detail: str) -> None:
    upstream = Upstream(lightrag_routes(httpx.Response(403, json={"detail": detail})))
    with pytest.raises(ProviderAuthError, match=f"LightRAG rejected the API key \\(HTTP 403\\): {detail}"):
        search(upstream)


def test_http_400_is_a_clear_validation_error() -> None:
    answer = httpx.Response(
        400, json=synthetic_lightrag_validation_error("query must be at least 3 characters")
    )
    with pytest.raises(
        ProviderRejectedError,
        match="LightRAG rejected the query as invalid: Validation error: query must be at least 3 characters",
    ):
        search(Upstream(lightrag_routes(answer)))


def test_http_500_is_a_clear_error_with_the_servers_detail() -> None:
    answer = httpx.Response(500, json={"detail": "Internal server error (error_id: 5f1)"})
    with pytest.raises(
        ProviderHTTPError, match=r"LightRAG answered HTTP 500: Internal server error \(error_id: 5f1\)"
    ):
        search(Upstream(lightrag_routes(answer)))


def test_another_failure_status_is_an_error_not_an_empty_result() -> None:
    body = {"status": "failure", "message": "Storage offline", "data": {}, "metadata": {}}
    with pytest.raises(ProviderRejectedError, match="could not answer the query: Storage offline"):
        search(Upstream(lightrag_routes(body)))


@pytest.mark.parametrize(
    "body",
    [
        [],
        {"status": "success"},
        {"status": "success", "data": []},
        {"status": "success", "data": {"chunks": {}}},
        {"status": "pending", "data": {}},
    ],
)
def test_answers_without_the_documented_shape_are_malformed(body: object) -> None:
    with pytest.raises(MalformedResponseError):
        search(Upstream(lightrag_routes(httpx.Response(200, json=body))))


def test_it_offers_two_tools_and_refuses_others_without_a_request() -> None:
    upstream = Upstream(lightrag_routes(synthetic_lightrag_success()))
    assert [c.tool for c in provider(upstream).capabilities()] == [
        "knowledge_search",
        "entity_relations_search",
    ]
    with pytest.raises(UnsupportedToolError):
        provider(upstream).search("q", tool="web_search")
    assert upstream.requests == []


def test_an_echoed_key_is_redacted_from_hits() -> None:
    body = synthetic_lightrag_success(
        chunks=[
            synthetic_lightrag_chunk(
                "doc-1-chunk-000", f"Synthetic echo {LIGHTRAG_KEY}", f"{LIGHTRAG_KEY}.txt"
            )
        ]
    )
    (hit,) = search(Upstream(lightrag_routes(body))).hits
    assert LIGHTRAG_KEY not in hit.text + (hit.title or "")
