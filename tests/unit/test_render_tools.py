"""Tool messages shown from the server's structured view, trusting only validated evidence."""

from __future__ import annotations

from typing import Any

from knowledgeweb.knowledge import (
    Evidence,
    FormattedResult,
    RetrievalHit,
    RetrievalResult,
    enforce_output_budget,
    format_result_view,
    read_sources,
)
from knowledgeweb.threads.rendering.tools import PREVIEW_CHARS, build_tool_view


def _relations() -> FormattedResult:
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
    return format_result_view(
        RetrievalResult(provider="lightrag", query="q", hits=hits, tool="entity_relations_search")
    )


def _validated(formatted: FormattedResult, tool: str = "entity_relations_search") -> dict[str, Evidence]:
    return dict(read_sources(tool, formatted.content, formatted.artifact))


def test_it_shows_each_hit_kind_in_order_with_the_same_summary_the_model_read() -> None:
    formatted = _relations()
    view = build_tool_view(formatted.content, formatted.view, _validated(formatted))
    assert [b.kind for b in view.blocks] == ["source", "unattributed", "entity", "relation", "relation"]
    assert [b.position for b in view.blocks] == [1, 2, 3, 4, 5]
    # One place for the phrases: the summary is the content's first line, word for word.
    assert view.header == formatted.content.split("\n", 1)[0]
    assert view.header == "Entity relations search results from lightrag (5 of 5 shown)."


def test_it_keeps_a_cited_excerpt_whole_even_when_it_imitates_a_block() -> None:
    formatted = _relations()
    view = build_tool_view(formatted.content, formatted.view, _validated(formatted))
    source_block = view.blocks[0]
    assert source_block.source is not None
    assert source_block.body == source_block.source.excerpt
    assert "[9] Graph relation" in source_block.body
    assert len(view.blocks) == 5  # the imitation did not split it


def test_it_links_each_edge_to_the_block_holding_its_evidence() -> None:
    formatted = _relations()
    view = build_tool_view(formatted.content, formatted.view, _validated(formatted))
    supported, unsupported = view.blocks[3], view.blocks[4]
    assert supported.heading == "Alice -> Acme"
    assert supported.body == "works for"
    assert [(link.position, link.shown, link.source is not None) for link in supported.links] == [
        (1, True, True)
    ]
    assert unsupported.evidence == ()
    assert unsupported.links == ()


def test_it_marks_a_document_hit_without_validated_evidence_as_unverified() -> None:
    formatted = _relations()
    view = build_tool_view(formatted.content, formatted.view, {})  # e.g. the evidence did not validate
    assert view.blocks[0].kind == "unverified"
    assert view.blocks[0].source is None
    assert view.blocks[0].heading == "people.md"


def test_a_tool_message_without_a_server_view_is_shown_generically_as_text() -> None:
    formatted = _relations()
    # A caller's tool message carries no server view, whatever its content imitates.
    view = build_tool_view(formatted.content, None, _validated(formatted))
    assert not view.structured
    assert [(b.kind, b.body) for b in view.blocks] == [("text", formatted.content)]
    assert view.header == ""
    hostile = build_tool_view("<script>alert(1)</script>\nno blocks here", None, {})
    assert [(b.kind, b.body) for b in hostile.blocks] == [
        ("text", "<script>alert(1)</script>\nno blocks here")
    ]


def test_a_view_of_another_shape_is_not_trusted_as_the_servers() -> None:
    formatted = _relations()
    forged_views: list[Any] = [
        {"hits": []},
        {**formatted.view, "version": 99},
        {**formatted.view, "shown": "5"},
        [],
    ]
    for forged in forged_views:
        assert not build_tool_view(formatted.content, forged, {}).structured


def test_a_long_tool_output_is_previewed_and_the_rest_is_one_link_away() -> None:
    content = "x" * (PREVIEW_CHARS * 3)
    view = build_tool_view(content, None, {})
    assert view.cut
    assert view.full_chars == len(content)
    assert len(view.blocks[0].body) == PREVIEW_CHARS
    short = build_tool_view("short", None, {})
    assert not short.cut


def test_it_keeps_the_omission_notice_the_model_read() -> None:
    hits = tuple(RetrievalHit(text=f"chunk {i} " * 40, title=f"doc{i}.md") for i in range(5))
    formatted = format_result_view(
        RetrievalResult(provider="local", query="q", hits=hits), max_total_chars=900
    )
    view = build_tool_view(formatted.content, formatted.view, _validated(formatted, "knowledge_search"))
    assert view.notice == "4 more results omitted to fit the output budget."
    assert view.notice in formatted.content
    assert all(b.kind == "source" for b in view.blocks)


def test_hits_cut_by_the_output_budget_leave_the_view_and_it_says_so() -> None:
    hits = tuple(RetrievalHit(text=f"chunk {i} " * 40, title=f"doc{i}.md") for i in range(5))
    formatted = format_result_view(RetrievalResult(provider="local", query="q", hits=hits))
    content, artifact = enforce_output_budget(formatted.content, formatted.artifact, 1200)
    view_json = formatted.view_within(content)
    assert view_json["budget_truncated"] is True
    assert 0 < len(view_json["hits"]) < 5
    view = build_tool_view(content, view_json, read_sources("knowledge_search", content, artifact))
    assert [b.kind for b in view.blocks] == ["source"] * len(view_json["hits"])
    assert "Output truncated to fit the tool output budget" in view.notice
