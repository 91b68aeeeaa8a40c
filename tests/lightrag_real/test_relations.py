"""entity_relations_search against the real LightRAG 1.5.7 server, through the whole stack.

An edge's evidence must be exactly the returned chunks its ``<SEP>``-joined ``source_id``
names, in that order; graph descriptions are never cited.
"""

from __future__ import annotations

import html
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.knowledge import RetrievalHit, RetrievalResult, format_result
from knowledgeweb.providers.lightrag.relations import graph_text, relation_hits
from knowledgeweb.retrieval import retrieval_search
from knowledgeweb.threads.evidence import message_sources
from knowledgeweb.threads.models import Message, Thread
from tests.lightrag_real.checks import (
    assert_server_repeats,
    cite_all,
    quoted_chunk,
    recorded_data,
    recorded_message,
    recorded_request,
    split_sep,
    viewer_resolves,
)
from tests.lightrag_real.servers import LightragServer
from tests.live.conftest import RecordingTransport

pytestmark = [pytest.mark.real_lightrag, pytest.mark.django_db]

QUESTION = "How is Clara Voss connected to the Meridian Observatory?"


def hits_of(message: Message, data: dict[str, Any]) -> list[RetrievalHit]:
    """The adapter's hits for the recorded answer, checked to be what the tool message holds."""
    hits = relation_hits(data, top_k=10)
    result = RetrievalResult(provider="lightrag", query=QUESTION, hits=tuple(hits), tool=message.name)
    content, _ = format_result(result)
    assert content == message.content
    return hits


@pytest.fixture
def searched(
    binding: KnowledgeBinding, user: User, thread: Thread, recording: RecordingTransport
) -> tuple[Message, dict[str, Any], dict[str, Any]]:
    outcome = retrieval_search(user=user, tool="entity_relations_search", query=QUESTION, thread_id=thread.id)
    assert outcome.status == "success", outcome.content
    return recorded_message(outcome), recorded_request(recording), recorded_data(recording)


def test_it_asks_in_hybrid_mode_and_the_server_repeats_its_answer(
    searched: tuple[Message, dict[str, Any], dict[str, Any]], lightrag_server: LightragServer
) -> None:
    _, sent, data = searched
    assert sent == {"query": QUESTION, "mode": "hybrid", "top_k": 10, "chunk_top_k": 10}
    assert data["relationships"]
    assert data["entities"]
    assert data["chunks"]
    assert_server_repeats(lightrag_server, sent, data)


def test_each_edge_cites_exactly_the_returned_chunks_its_source_id_names(
    searched: tuple[Message, dict[str, Any], dict[str, Any]],
) -> None:
    message, _, data = searched
    hits = hits_of(message, data)
    chunks = {c["chunk_id"]: c for c in data["chunks"]}
    edges = [h for h in hits if h.kind == "relation"]
    assert edges
    joined = 0
    for position, edge in enumerate(hits, start=1):
        if edge.kind != "relation":
            continue
        (relationship,) = [
            r
            for r in data["relationships"]
            if {r["src_id"], r["tgt_id"]} == {edge.source_entity, edge.target_entity}
        ]
        assert edge.text == graph_text(relationship["description"])
        named = split_sep(relationship["source_id"])
        expected = [chunks[c]["content"].strip() for c in named if c in chunks]
        cited = [hits[p - 1] for p in edge.evidence]
        assert all(p < position for p in edge.evidence), "evidence always comes before its edge"
        assert [h.text for h in cited] == list(dict.fromkeys(expected))
        assert all(h.kind == "document" for h in cited)
        for evidence_hit, chunk_id in zip(cited, [c for c in named if c in chunks], strict=False):
            assert evidence_hit.title == chunks[chunk_id]["file_path"]
        joined += len(named) > 1 and len(edge.evidence) > 1
    assert joined, "no edge with several <SEP>-joined evidence chunks: the corpus should produce one"


def test_only_evidence_chunks_become_documents_and_entities_stay_unattributed(
    searched: tuple[Message, dict[str, Any], dict[str, Any]],
) -> None:
    message, _, data = searched
    hits = hits_of(message, data)
    named = {c for r in data["relationships"] for c in split_sep(r["source_id"])}
    evidence_texts = {c["content"].strip() for c in data["chunks"] if c["chunk_id"] in named}
    assert {h.text for h in hits if h.kind == "document"} <= evidence_texts
    entities = {e["entity_name"]: e for e in data["entities"]}
    for hit in (h for h in hits if h.kind == "entity"):
        entity = entities[hit.source_entity or ""]
        assert (hit.title, hit.entity_type) == (None, entity["entity_type"])
        assert hit.text == graph_text(entity["description"])
    for evidence in message_sources(message).values():
        quoted_chunk(evidence, data["chunks"])
        assert not any(evidence.excerpt == graph_text(r["description"]) for r in data["relationships"])


def test_the_viewer_links_each_edge_to_its_evidence_and_resolves_the_citations(
    searched: tuple[Message, dict[str, Any], dict[str, Any]], thread: Thread, reader: Client
) -> None:
    message, _, data = searched
    sources = message_sources(message)
    assert sorted(cite_all(thread, message.content)) == sorted(sources)
    page = viewer_resolves(reader, thread, sources)
    hits = hits_of(message, data)
    for edge in (h for h in hits if h.kind == "relation"):
        for position in edge.evidence:
            assert f'href="#hit-{message.id}-{position}" data-edge-evidence="{position}"' in page
        assert html.escape(f"{edge.source_entity}") in page
