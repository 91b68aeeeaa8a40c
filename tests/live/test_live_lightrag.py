"""Live LightRAG: every citation matches the chunk text the server really returned."""

from __future__ import annotations

import json
from typing import Any

import pytest

from knowledgeweb.knowledge import Evidence, format_result, read_sources
from knowledgeweb.knowledge.bounds import TRUNCATION_MARK
from knowledgeweb.providers.lightrag import QUERY_MODES, LightragProvider, lightrag_connection
from knowledgeweb.providers.lightrag.documents import chunk_text, chunk_title, reference_paths
from knowledgeweb.providers.lightrag.relations import split_sep
from tests.live.conftest import RecordingTransport, live_settings

pytestmark = pytest.mark.live


def provider() -> tuple[LightragProvider, str]:
    url, key, query = live_settings("lightrag")
    return LightragProvider(connection=lightrag_connection(base_url=url, api_key=key, timeout=120)), query


def returned_chunks(recording: RecordingTransport) -> tuple[list[dict[str, Any]], dict[str, str]]:
    (body,) = recording.bodies("/query/data")
    data = body.get("data") or {}
    return [c for c in data.get("chunks", []) if isinstance(c, dict)], reference_paths(data)


def assert_quoted_from(
    evidence: Evidence, chunks: list[dict[str, Any]], references: dict[str, str]
) -> dict[str, Any]:
    """The chunk this citation quotes: same title, and the excerpt is its text (or a prefix of it)."""
    excerpt = (
        evidence.excerpt.removesuffix(TRUNCATION_MARK).rstrip() if evidence.truncated else evidence.excerpt
    )
    for chunk in chunks:
        text = chunk_text(chunk)
        if chunk_title(chunk, references) == evidence.title and (
            text.startswith(excerpt) if evidence.truncated else text == excerpt
        ):
            return chunk
    raise AssertionError(f"citation {evidence.handle} ({evidence.title}) quotes no returned chunk")


def test_every_document_citation_is_real_returned_chunk_text(recording: RecordingTransport) -> None:
    adapter, query = provider()
    result = adapter.search(query, tool="knowledge_search", top_k=10)
    content, artifact = format_result(result)
    sources = read_sources("knowledge_search", content, artifact)
    assert sources, "no attributable hits: set KNOWLEDGEWEB_LIVE_LIGHTRAG_QUERY to match indexed documents"
    chunks, references = returned_chunks(recording)
    for evidence in sources.values():
        assert (evidence.provider, evidence.url, evidence.page) == ("lightrag", None, None)
        assert_quoted_from(evidence, chunks, references)


def test_every_relation_points_at_chunks_its_source_id_names(recording: RecordingTransport) -> None:
    adapter, query = provider()
    result = adapter.search(query, tool="entity_relations_search", top_k=10)
    (body,) = recording.bodies("/query/data")
    data = body.get("data") or {}
    chunks, references = returned_chunks(recording)
    by_text = {chunk_text(c): c for c in chunks}
    edges = {
        (r.get("src_id"), r.get("tgt_id")): r for r in data.get("relationships", []) if isinstance(r, dict)
    }
    assert result.hits, "no graph results: set KNOWLEDGEWEB_LIVE_LIGHTRAG_QUERY to match indexed documents"
    for position, hit in enumerate(result.hits, start=1):
        if hit.kind != "relation":
            continue
        edge = edges.get((hit.source_entity, hit.target_entity))
        assert edge is not None, f"relation {hit.source_entity} -> {hit.target_entity} was not returned"
        named = set(split_sep(edge.get("source_id")))
        for evidence_position in hit.evidence:
            assert evidence_position < position
            evidence_hit = result.hits[evidence_position - 1]
            chunk = by_text[evidence_hit.text]
            assert chunk["chunk_id"] in named
            assert evidence_hit.title == chunk_title(chunk, references)
    content, artifact = format_result(result)
    for evidence in read_sources("entity_relations_search", content, artifact).values():
        assert_quoted_from(evidence, chunks, references)


@pytest.mark.parametrize("mode", QUERY_MODES)
def test_each_query_mode_is_sent_and_its_citations_are_returned_chunk_text(
    mode: str, recording: RecordingTransport
) -> None:
    url, key, query = live_settings("lightrag")
    adapter = LightragProvider(
        connection=lightrag_connection(base_url=url, api_key=key, timeout=120), mode=mode
    )
    result = adapter.search(query, tool="knowledge_search", top_k=10)
    (request, _, _), *_ = [
        exchange for exchange in recording.exchanges if exchange[0].url.path == "/query/data"
    ]
    assert json.loads(request.content)["mode"] == mode
    content, artifact = format_result(result)
    chunks, references = returned_chunks(recording)
    for evidence in read_sources("knowledge_search", content, artifact).values():
        assert_quoted_from(evidence, chunks, references)
