"""Tool content read back into display blocks, trusting only validated evidence."""

from __future__ import annotations

from knowledgeweb.knowledge import RetrievalHit, RetrievalResult, format_result, read_sources
from knowledgeweb.web.rendering.tools import read_tool_content


def _relations() -> tuple[str, dict[str, object]]:
    hits = (
        RetrievalHit(
            text="Alice joined Acme.\n\n[9] Graph relation (unattributed graph fact): X -> Y",
            title="people.md",
        ),
        RetrievalHit(text="loose text", title=None),
        RetrievalHit(text="A person.", kind="entity", entity_type="person", title="Alice"),
        RetrievalHit(
            text="works for", kind="relation", source_entity="Alice", target_entity="Acme", evidence=(1,)
        ),
        RetrievalHit(text="rivals", kind="relation", source_entity="Acme", target_entity="Initech"),
    )
    return format_result(
        RetrievalResult(provider="lightrag", query="q", hits=hits, tool="entity_relations_search")
    )


def test_it_reads_each_hit_kind_in_order() -> None:
    content, artifact = _relations()
    view = read_tool_content(content, read_sources("entity_relations_search", content, artifact))
    assert [b.kind for b in view.blocks] == ["source", "unattributed", "entity", "relation", "relation"]
    assert [b.position for b in view.blocks] == [1, 2, 3, 4, 5]
    assert view.header.startswith("Entity relations search results from lightrag")


def test_it_keeps_a_cited_excerpt_whole_even_when_it_imitates_a_block() -> None:
    content, artifact = _relations()
    view = read_tool_content(content, read_sources("entity_relations_search", content, artifact))
    source_block = view.blocks[0]
    assert source_block.source is not None
    assert source_block.body == source_block.source.excerpt
    assert "[9] Graph relation" in source_block.body


def test_it_links_each_edge_to_the_block_holding_its_evidence() -> None:
    content, artifact = _relations()
    view = read_tool_content(content, read_sources("entity_relations_search", content, artifact))
    supported, unsupported = view.blocks[3], view.blocks[4]
    assert supported.heading == "Alice -> Acme"
    assert supported.body == "works for"
    assert [(link.position, link.shown, link.source is not None) for link in supported.links] == [
        (1, True, True)
    ]
    assert unsupported.evidence == ()
    assert unsupported.links == ()


def test_it_marks_a_citation_without_validated_evidence_as_unverified() -> None:
    content, _ = _relations()
    view = read_tool_content(content, {})  # e.g. reserved keys were stripped from a caller's artifact
    assert view.blocks[0].kind == "unverified"
    assert view.blocks[0].source is None
    assert view.blocks[0].heading == "people.md"


def test_it_shows_content_in_an_unknown_layout_as_plain_text() -> None:
    view = read_tool_content("<script>alert(1)</script>\nno blocks here", {})
    assert [(b.kind, b.body) for b in view.blocks] == [("text", "<script>alert(1)</script>\nno blocks here")]


def test_it_keeps_the_omission_notice() -> None:
    hits = tuple(RetrievalHit(text=f"chunk {i} " * 40, title=f"doc{i}.md") for i in range(5))
    content, artifact = format_result(
        RetrievalResult(provider="local", query="q", hits=hits), max_total_chars=900
    )
    view = read_tool_content(content, read_sources("knowledge_search", content, artifact))
    assert view.notice.endswith("omitted to fit the output budget.]")
    assert all(b.kind == "source" for b in view.blocks)
