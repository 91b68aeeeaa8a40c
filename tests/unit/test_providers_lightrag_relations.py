"""LightRAG entity_relations_search: edges, their evidence chunks, entities (synthetic payloads)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from knowledgeweb.knowledge import format_result, read_sources
from knowledgeweb.knowledge.types import RetrievalResult
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
)

C1 = synthetic_lightrag_chunk("doc-aaa-chunk-000", "Synthetic: Alice founded Acme in 1999.")
C2 = synthetic_lightrag_chunk("doc-aaa-chunk-001", "Synthetic: Acme hired Bob as CEO.")
C3 = synthetic_lightrag_chunk("doc-bbb-chunk-000", "Synthetic: Bob studied in Lyon.", "people.md", "2")


def relations(body: dict[str, object], top_k: int = 20) -> tuple[Upstream, RetrievalResult]:
    upstream = Upstream(lightrag_routes(body))
    connection = lightrag_connection(base_url=LIGHTRAG_URL, api_key=LIGHTRAG_KEY, timeout=5)
    adapter = LightragProvider(connection=replace(connection, transport=upstream.transport))
    return upstream, adapter.search(
        "how are alice and bob related?", tool="entity_relations_search", top_k=top_k
    )


def test_it_queries_in_hybrid_mode() -> None:
    upstream, result = relations(synthetic_lightrag_success(mode="hybrid"))
    assert upstream.bodies("/query/data")[0]["mode"] == "hybrid"
    assert result.tool == "entity_relations_search"


def test_each_edge_follows_its_evidence_chunks_and_names_their_positions() -> None:
    body = synthetic_lightrag_success(
        mode="hybrid",
        chunks=[C1, C2, C3],
        relationships=[
            synthetic_lightrag_relationship(
                "Alice", "Acme", "Synthetic: Alice founded Acme.", "doc-aaa-chunk-000"
            ),
            synthetic_lightrag_relationship(
                "Acme", "Bob", "Synthetic: Bob is CEO of Acme.", "doc-aaa-chunk-001<SEP>doc-aaa-chunk-000"
            ),
        ],
    )
    _, result = relations(body)
    shape = [(h.kind, h.title, h.source_entity, h.target_entity, h.evidence) for h in result.hits]
    assert shape == [
        ("document", "acme.txt", None, None, ()),
        ("relation", None, "Alice", "Acme", (1,)),
        ("document", "acme.txt", None, None, ()),
        ("relation", None, "Acme", "Bob", (3, 1)),
    ]
    assert result.hits[0].text == C1["content"]
    assert result.hits[2].text == C2["content"]
    assert result.hits[3].text == "Synthetic: Bob is CEO of Acme."


def test_a_chunk_not_named_by_any_edge_is_not_emitted() -> None:
    body = synthetic_lightrag_success(
        chunks=[C1, C3],
        relationships=[
            synthetic_lightrag_relationship("Alice", "Acme", "Synthetic: founded.", "doc-aaa-chunk-000")
        ],
    )
    _, result = relations(body)
    assert [h.text for h in result.hits if h.kind == "document"] == [C1["content"]]


def test_an_edge_without_a_returned_chunk_has_no_evidence_even_with_a_shared_file_path() -> None:
    body = synthetic_lightrag_success(
        chunks=[C1],
        relationships=[
            synthetic_lightrag_relationship(
                "Acme",
                "Lyon",
                "Synthetic: Acme has an office in Lyon.",
                "doc-zzz-chunk-009",
                file_path="acme.txt",
            )
        ],
    )
    _, result = relations(body)
    (edge,) = result.hits
    assert (edge.kind, edge.evidence) == ("relation", ())
    content, artifact = format_result(result)
    assert "Evidence: none (no document evidence was retrieved for this relation)." in content
    assert artifact["knowledge_sources"] == []


def test_duplicate_edges_are_removed_in_either_direction() -> None:
    edge = synthetic_lightrag_relationship("Alice", "Acme", "Synthetic: founded.", "doc-aaa-chunk-000")
    reverse = synthetic_lightrag_relationship("Acme", "Alice", "Synthetic: founded.", "doc-aaa-chunk-000")
    _, result = relations(synthetic_lightrag_success(chunks=[C1], relationships=[edge, edge, reverse]))
    assert [h.kind for h in result.hits] == ["document", "relation"]


def test_entities_are_unattributed_graph_facts_after_the_edges() -> None:
    body = synthetic_lightrag_success(
        chunks=[C1],
        entities=[
            synthetic_lightrag_entity(
                "Acme", "Synthetic: a company.<SEP>Synthetic: makes anvils.", "doc-aaa-chunk-000"
            ),
            synthetic_lightrag_entity("Acme", "Synthetic duplicate.", "doc-aaa-chunk-000"),
            synthetic_lightrag_entity(
                "Alice", "Synthetic: a founder.", "doc-aaa-chunk-000", entity_type="person"
            ),
        ],
        relationships=[
            synthetic_lightrag_relationship("Alice", "Acme", "Synthetic: founded.", "doc-aaa-chunk-000")
        ],
    )
    _, result = relations(body)
    entities = [h for h in result.hits if h.kind == "entity"]
    assert [(h.source_entity, h.entity_type, h.title, h.text) for h in entities] == [
        ("Acme", "organization", None, "Synthetic: a company.\nSynthetic: makes anvils."),
        ("Alice", "person", None, "Synthetic: a founder."),
    ]
    assert [h.kind for h in result.hits] == ["document", "relation", "entity", "entity"]


def test_graph_descriptions_never_become_cited_excerpts() -> None:
    body = synthetic_lightrag_success(
        chunks=[C1],
        entities=[synthetic_lightrag_entity("Acme", "Synthetic: a company.", "doc-aaa-chunk-000")],
        relationships=[
            synthetic_lightrag_relationship(
                "Alice", "Acme", "Synthetic: founded.<SEP>Synthetic: owns.", "doc-aaa-chunk-000"
            )
        ],
    )
    _, result = relations(body)
    content, artifact = format_result(result)
    sources = read_sources("entity_relations_search", content, artifact)
    assert [e.excerpt for e in sources.values()] == [C1["content"]]
    assert (
        "Graph relation (unattributed graph fact): Alice -> Acme\nSynthetic: founded.\nSynthetic: owns.\nEvidence: [1]"
        in content
    )
    assert "Graph entity (organization) (unattributed graph fact): Acme\nSynthetic: a company." in content


def test_an_unattributed_evidence_chunk_is_shown_but_not_cited() -> None:
    orphan = synthetic_lightrag_chunk("doc-ccc-chunk-000", "Synthetic: unsourced note.", "unknown_source", "")
    body = synthetic_lightrag_success(
        chunks=[orphan],
        relationships=[synthetic_lightrag_relationship("A", "B", "Synthetic: linked.", "doc-ccc-chunk-000")],
    )
    _, result = relations(body)
    assert (result.hits[0].title, result.hits[1].evidence) == (None, (1,))
    content, artifact = format_result(result)
    assert artifact["knowledge_sources"] == []
    assert "Unattributed text (no citable source)" in content


def test_any_prefix_of_the_result_keeps_every_edges_evidence() -> None:
    chunks = [synthetic_lightrag_chunk(f"doc-x-chunk-{i:03d}", f"Synthetic evidence {i}.") for i in range(6)]
    edges = [
        synthetic_lightrag_relationship(
            f"E{i}",
            f"E{i + 1}",
            f"Synthetic edge {i}.",
            f"doc-x-chunk-{i:03d}<SEP>doc-x-chunk-{(i + 2) % 6:03d}",
        )
        for i in range(6)
    ]
    _, result = relations(synthetic_lightrag_success(chunks=chunks, relationships=edges))
    for position, hit in enumerate(result.hits, start=1):
        if hit.kind == "relation":
            assert hit.evidence
            assert all(p < position and result.hits[p - 1].kind == "document" for p in hit.evidence)
    assert sum(h.kind == "document" for h in result.hits) == 6


def test_the_budget_cuts_a_prefix_and_never_leaves_an_edge_without_shown_evidence() -> None:
    chunks = [
        synthetic_lightrag_chunk(f"doc-x-chunk-{i:03d}", f"Synthetic evidence {i}. " * 20) for i in range(8)
    ]
    edges = [
        synthetic_lightrag_relationship(f"E{i}", f"F{i}", f"Synthetic edge {i}.", f"doc-x-chunk-{i:03d}")
        for i in range(8)
    ]
    _, result = relations(synthetic_lightrag_success(chunks=chunks, relationships=edges))
    content, artifact = format_result(result, max_total_chars=2000)
    assert "omitted to fit the output budget" in content
    shown_edges = content.count("Graph relation")
    assert 0 < shown_edges < 8
    assert len(read_sources("entity_relations_search", content, artifact)) == shown_edges


def test_top_k_bounds_edges_and_entities() -> None:
    edges = [synthetic_lightrag_relationship(f"E{i}", f"F{i}", f"Synthetic {i}.", "none") for i in range(5)]
    entities = [synthetic_lightrag_entity(f"N{i}", f"Synthetic {i}.", "none") for i in range(5)]
    _, result = relations(synthetic_lightrag_success(relationships=edges, entities=entities), top_k=2)
    assert [h.kind for h in result.hits] == ["relation", "relation", "entity", "entity"]


def test_edges_without_a_description_say_so_instead_of_vanishing() -> None:
    edge = synthetic_lightrag_relationship("A", "B", "", "none", keywords="ownership,founding")
    _, result = relations(synthetic_lightrag_success(relationships=[edge]))
    assert result.hits[0].text == "(No description returned; keywords: ownership, founding.)"


@pytest.mark.parametrize("bad", [None, {"src_id": "A"}, {"src_id": "", "tgt_id": "B"}, "edge"])
def test_unusable_edges_are_skipped(bad: object) -> None:
    body = synthetic_lightrag_success(chunks=[C1])
    body["data"]["relationships"] = [bad]
    _, result = relations(body)
    assert result.hits == ()


def test_no_results_is_an_empty_result() -> None:
    _, result = relations(synthetic_lightrag_no_results("hybrid"))
    assert result.hits == ()
