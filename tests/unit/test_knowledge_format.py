"""format_result turns a retrieval into content and evidence under budgets (docs/contract.md#source-records, docs/contract.md#formatting-and-budgets)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings

from knowledgeweb.knowledge import RagflowLocator, RetrievalHit, RetrievalResult, format_result, read_sources
from tests.unit.strategies import (
    NONCE,
    artifact_records,
    budgets,
    content_handles,
    marked_budgets,
    marker,
    results,
    spec_id,
)

Check = Callable[[dict[str, Any] | None], int]
# Documented in knowledgeweb/knowledge/formatting.py and bounds.TRUNCATION_MARK.
OMISSION = re.compile(r"\[(\d+) more results? omitted to fit the output budget\.\]")
TRUNCATION_MARK = " […]"


def _doc(text: str, title: str | None = "Guide", **fields: Any) -> RetrievalHit:
    return RetrievalHit(text=text, title=title, **fields)


def _ragflow(text: str, n: int, **fields: Any) -> RetrievalHit:
    locator = RagflowLocator(dataset_id=f"ds{n}", document_id=f"doc{n}", chunk_id=f"c{n}", pages=(n,))
    defaults: dict[str, Any] = {"title": f"Manual {n}.pdf", "dataset_name": "Handbook", "locator": locator}
    return RetrievalHit(text=text, **{**defaults, **fields})


def _omitted(content: str) -> int:
    counts = [int(n) for n in OMISSION.findall(content)]
    assert len(counts) <= 1
    return counts[0] if counts else 0


# --- the shared form ---------------------------------------------------------------------


def test_a_titled_document_hit_is_cited_and_followed_by_its_excerpt(validate_artifact: Check) -> None:
    hit = _doc("Descale monthly.", dataset_name="Care", url="https://example.org/care", page=4)
    content, artifact = format_result(RetrievalResult(provider="lightrag", query="q", hits=(hit,)))

    record_id = spec_id("lightrag", "Guide", "Descale monthly.", "Care", "https://example.org/care", 4)
    assert artifact == {
        "knowledge_sources_version": 1,
        "knowledge_sources": [
            {
                "id": record_id,
                "provider": "lightrag",
                "title": "Guide",
                "excerpt": "Descale monthly.",
                "dataset_name": "Care",
                "url": "https://example.org/care",
                "page": 4,
            }
        ],
    }
    link = f"[citation:Guide](#knowledge-source-{record_id})"
    assert link in content
    assert content.index(link) < content.index("Descale monthly.")
    assert validate_artifact(artifact) == 1
    assert list(read_sources("lightrag_search", content, artifact)) == [f"knowledge-source-{record_id}"]


def test_an_untitled_hit_is_plain_text_with_no_citation(validate_artifact: Check) -> None:
    hits = (_doc("Anonymous chunk text.", title=None), _doc("Blank titled chunk.", title="   "))
    content, artifact = format_result(RetrievalResult(provider="local", query="q", hits=hits))

    assert "Anonymous chunk text." in content
    assert "Blank titled chunk." in content
    assert "citation:" not in content
    assert artifact == {"knowledge_sources_version": 1, "knowledge_sources": []}
    assert validate_artifact(artifact) == 1


def test_graph_facts_are_labelled_unattributed_and_relations_list_their_evidence() -> None:
    hits = (
        _doc("Alice founded Acme in 1999."),
        RetrievalHit(text="A coffee company.", kind="entity", title="Acme", entity_type="organization"),
        RetrievalHit(
            text="Alice founded Acme.",
            kind="relation",
            source_entity="Alice",
            target_entity="Acme",
            evidence=(1,),
        ),
    )
    content, artifact = format_result(RetrievalResult(provider="lightrag", query="q", hits=hits))

    assert len(artifact["knowledge_sources"]) == 1
    assert content.count("(unattributed graph fact):") == 2
    relation = content[content.index("Alice -> Acme") :]
    assert "Evidence: [1]" in relation
    # A model reading the graph is told what it may cite and what it may not.
    header = content.split("\n\n", 1)[0]
    assert "never quote or cite them as evidence" in header


def test_a_documents_only_result_carries_no_graph_legend() -> None:
    content, _ = format_result(RetrievalResult(provider="lightrag", query="q", hits=(_doc("Text."),)))
    assert "How to read these results" not in content


def test_optional_fields_that_break_a_bound_are_left_out_not_repaired(validate_artifact: Check) -> None:
    hit = _doc("Some text.", dataset_name=" ", url="javascript:alert(1)", page=0)
    _, artifact = format_result(RetrievalResult(provider="lightrag", query="q", hits=(hit,)))

    (record,) = artifact["knowledge_sources"]
    assert set(record) == {"id", "provider", "title", "excerpt"}
    assert record["id"] == spec_id("lightrag", "Guide", "Some text.")
    assert validate_artifact(artifact) == 1


def test_a_title_longer_than_the_bound_still_gives_a_valid_record(validate_artifact: Check) -> None:
    content, artifact = format_result(
        RetrievalResult(provider="local", query="q", hits=(_doc("Text.", title="T" * 1500),))
    )
    assert validate_artifact(artifact) == 1
    assert len(read_sources("local_search", content, artifact)) == 1


def test_a_title_blank_within_its_first_1024_characters_never_gives_an_invalid_record(
    validate_artifact: Check,
) -> None:
    content, artifact = format_result(
        RetrievalResult(provider="local", query="q", hits=(_doc("Text.", title=" " * 1024 + "Late title"),))
    )
    assert validate_artifact(artifact) == 1
    assert len(read_sources("local_search", content, artifact)) == len(artifact["knowledge_sources"])


def test_an_excerpt_is_shortened_to_the_per_hit_limit_and_hashed_as_displayed(
    validate_artifact: Check,
) -> None:
    text = "0123456789" * 10
    content, artifact = format_result(
        RetrievalResult(provider="lightrag", query="q", hits=(_doc(text),)), max_chars_per_hit=30
    )

    (record,) = artifact["knowledge_sources"]
    assert len(record["excerpt"]) <= 30
    assert record["excerpt"].endswith(TRUNCATION_MARK)
    assert text.startswith(record["excerpt"].removesuffix(TRUNCATION_MARK))
    assert record["id"] == spec_id("lightrag", "Guide", record["excerpt"])
    assert text not in content
    evidence = read_sources("knowledge_search", content, artifact)[f"knowledge-source-{record['id']}"]
    assert evidence.truncated
    assert validate_artifact(artifact) == 1


def test_a_cited_hit_that_cannot_fit_is_omitted_whole_and_counted() -> None:
    hits = (_doc("short one"), _doc("x" * 700, title="Long"), _doc("short two", title="Other"))
    content, artifact = format_result(
        RetrievalResult(provider="lightrag", query="q", hits=hits), max_total_chars=500
    )

    assert [r["excerpt"] for r in artifact["knowledge_sources"]] == ["short one"]
    assert "citation:Long" not in content
    assert "x" * 50 not in content
    assert _omitted(content) == 2
    assert len(content) <= 500


def test_at_most_one_hundred_hits_are_shown_and_the_rest_are_counted(validate_artifact: Check) -> None:
    hits = tuple(_doc(f"Fact number {n}.", title=f"Doc {n}") for n in range(1, 106))
    content, artifact = format_result(
        RetrievalResult(provider="lightrag", query="q", hits=hits), max_total_chars=1_000_000
    )

    assert len(artifact["knowledge_sources"]) == 100
    assert "Fact number 100." in content
    assert "Fact number 101." not in content
    assert _omitted(content) == 5
    assert validate_artifact(artifact) == 1


def test_nothing_found_gives_an_empty_valid_envelope(validate_artifact: Check) -> None:
    content, artifact = format_result(RetrievalResult(provider="local", query="q", hits=()))
    assert content
    assert artifact == {"knowledge_sources_version": 1, "knowledge_sources": []}
    assert validate_artifact(artifact) == 1


# --- the native RAGFlow form ---------------------------------------------------------------


def test_a_ragflow_result_with_complete_locators_gives_the_native_snapshot(validate_artifact: Check) -> None:
    hits = (_ragflow("First chunk.", 1), _ragflow("Second chunk.", 2))
    content, artifact = format_result(
        RetrievalResult(provider="ragflow", query="q", hits=hits), native_nonce=NONCE
    )

    assert set(artifact) == {"knowledge_sources"}
    sources = artifact["knowledge_sources"]["sources"]
    assert sources[0] == {
        "id": f"{NONCE}-1",
        "provider": "ragflow",
        "dataset_id": "ds1",
        "document_id": "doc1",
        "chunk_id": "c1",
        "dataset_name": "Handbook",
        "document_name": "Manual 1.pdf",
        "text": "First chunk.",
        "truncated": False,
        "pages": [1],
    }
    assert sources[1]["id"] == f"{NONCE}-2"
    assert f"[citation:1](#knowledge-{NONCE}-1)" in content
    assert f"[citation:2](#knowledge-{NONCE}-2)" in content
    # The names are written outside the link label.
    assert "Manual 1.pdf" in content
    assert "[citation:Manual" not in content
    assert validate_artifact(artifact) == 1
    assert len(read_sources("knowledge_search", content, artifact)) == 2


def test_native_ids_are_random_for_each_retrieval_call() -> None:
    result = RetrievalResult(provider="ragflow", query="q", hits=(_ragflow("Chunk.", 1),))
    _, first = format_result(result)
    _, second = format_result(result)
    first_id = first["knowledge_sources"]["sources"][0]["id"]
    second_id = second["knowledge_sources"]["sources"][0]["id"]
    assert re.fullmatch(r"[a-f0-9]{32}-1", first_id)
    assert first_id != second_id


def test_a_shortened_native_excerpt_is_marked_truncated(validate_artifact: Check) -> None:
    result = RetrievalResult(provider="ragflow", query="q", hits=(_ragflow("y" * 200, 1),))
    content, artifact = format_result(result, max_chars_per_hit=50)
    (source,) = artifact["knowledge_sources"]["sources"]
    assert source["truncated"] is True
    assert len(source["text"]) <= 50
    assert source["text"] in content
    assert validate_artifact(artifact) == 1


def test_a_ragflow_result_with_one_incomplete_locator_gives_the_shared_form(validate_artifact: Check) -> None:
    hits = (_ragflow("Located.", 1), _doc("Not located.", title="Loose.pdf", dataset_name="Handbook"))
    content, artifact = format_result(RetrievalResult(provider="ragflow", query="q", hits=hits))

    assert artifact["knowledge_sources_version"] == 1
    assert [r["provider"] for r in artifact["knowledge_sources"]] == ["ragflow", "ragflow"]
    assert validate_artifact(artifact) == 1
    assert len(read_sources("knowledge_search", content, artifact)) == 2


def test_a_ragflow_hit_missing_its_names_gives_the_shared_form(validate_artifact: Check) -> None:
    hits = (_ragflow("Located.", 1), _ragflow("No dataset name.", 2, dataset_name=None))
    _, artifact = format_result(RetrievalResult(provider="ragflow", query="q", hits=hits))
    assert isinstance(artifact["knowledge_sources"], list)
    assert validate_artifact(artifact) == 1


def test_lightrag_hits_with_locators_still_give_the_shared_form() -> None:
    _, artifact = format_result(
        RetrievalResult(provider="lightrag", query="q", hits=(_ragflow("Chunk.", 1),))
    )
    assert artifact["knowledge_sources_version"] == 1
    assert isinstance(artifact["knowledge_sources"], list)


def test_native_ids_stay_valid_after_many_blank_hits(validate_artifact: Check) -> None:
    blanks = tuple(_ragflow(" ", n) for n in range(1, 1001))
    result = RetrievalResult(provider="ragflow", query="q", hits=(*blanks, _ragflow("The only text.", 1001)))
    content, artifact = format_result(result, native_nonce=NONCE)
    assert validate_artifact(artifact) >= 1
    records = artifact_records(artifact)
    assert len(records) == 1
    assert len(read_sources("knowledge_search", content, artifact)) == 1


# --- properties for any result and any budgets ---------------------------------------------


@settings(max_examples=100, deadline=None)
@given(result=results(), budget=budgets)
def test_every_artifact_validates_and_every_record_has_its_handle_and_exact_excerpt_in_the_content(
    validate_artifact: Check, result: RetrievalResult, budget: dict[str, Any]
) -> None:
    content, artifact = format_result(result, **budget)

    assert validate_artifact(artifact) == 1
    records = artifact_records(artifact)
    for handle, excerpt, _ in records:
        assert f"#{handle}" in content
        assert excerpt in content
    # No citation link without its record, and the reader accepts every record.
    assert content_handles(content) == {handle for handle, _, _ in records}
    found = read_sources("knowledge_search", content, artifact)
    assert sorted(found) == sorted(handle for handle, _, _ in records)
    assert len(records) <= 100


@settings(max_examples=100, deadline=None)
@given(result=results(), budget=marked_budgets)
def test_shown_hits_are_whole_at_most_one_hundred_and_the_notice_counts_the_rest(
    result: RetrievalResult, budget: dict[str, Any]
) -> None:
    content, artifact = format_result(result, **budget)

    nonblank = [(n, hit) for n, hit in enumerate(result.hits, 1) if hit.text.strip()]
    shown = {n for n, _ in nonblank if marker(n) in content}
    recorded = {
        n: record
        for n, _ in nonblank
        for _, excerpt, record in artifact_records(artifact)
        if excerpt.startswith(marker(n))
    }

    assert len(shown) <= 100
    assert _omitted(content) == len(nonblank) - len(shown)
    for n, hit in nonblank:
        cited = hit.kind == "document" and hit.title is not None and hit.title.strip() != ""
        # A cited hit is either shown with its evidence or absent altogether.
        assert (n in shown) == (n in recorded) if cited else n not in recorded
    for n, hit in nonblank:
        if n not in recorded:
            continue
        record = recorded[n]
        excerpt = record.get("excerpt", record.get("text"))
        assert isinstance(excerpt, str)
        shortened = len(hit.text) > budget["max_chars_per_hit"]
        assert len(excerpt) <= budget["max_chars_per_hit"]
        assert excerpt == hit.text if not shortened else excerpt.endswith(TRUNCATION_MARK)
        assert record.get("truncated", shortened) == shortened
    assert len(content) <= budget["max_total_chars"] or not shown


def test_a_per_hit_limit_smaller_than_the_truncation_mark_still_holds(validate_artifact: Check) -> None:
    for limit in (1, 2, 4):
        content, artifact = format_result(
            RetrievalResult(provider="lightrag", query="q", hits=(_doc("abcdefghij"),)),
            max_chars_per_hit=limit,
        )
        (record,) = artifact["knowledge_sources"]
        assert record["excerpt"] == "abcdefghij"[:limit]
        assert validate_artifact(artifact) == 1
        assert read_sources("knowledge_search", content, artifact)
