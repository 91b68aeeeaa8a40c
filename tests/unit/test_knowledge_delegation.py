"""Delegated reports forward only the evidence they cite, within bounds (docs/contract.md#delegation-and-accumulation)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from knowledgeweb.knowledge import Evidence, forward_sources, read_sources
from tests.unit.strategies import native_message, native_record, shared_message, shared_record

Check = Callable[[dict[str, Any] | None], int]


def _shared_evidence(count: int, *, size: int = 1) -> list[Evidence]:
    records = [shared_record(title=f"Doc {n}", excerpt=f"Evidence {n}. " * size) for n in range(count)]
    # One message holds at most 100 records, so larger sets come from several retrievals.
    return [
        evidence
        for start in range(0, count, 100)
        for evidence in read_sources(
            "knowledge_search", *shared_message(records[start : start + 100])
        ).values()
    ]


def _native_evidence(count: int) -> list[Evidence]:
    return list(
        read_sources(
            "knowledge_search", *native_message([native_record(n) for n in range(1, count + 1)])
        ).values()
    )


def _cite(*sources: Evidence) -> str:
    return "Report. " + " ".join(f"[citation:{s.title}](#{s.handle})" for s in sources)


def test_it_forwards_only_the_sources_the_report_cites(validate_artifact: Check) -> None:
    first, second, third = _shared_evidence(3)

    content, artifact = forward_sources(_cite(first, third), [first, second, third])

    assert content.startswith(_cite(first, third))
    assert [r["id"] for r in artifact["knowledge_sources"]] == [first.id, third.id]
    assert validate_artifact(artifact) == 1
    found = read_sources("task", content, artifact)
    assert list(found) == [first.handle, third.handle]
    assert found[first.handle] == first


def test_a_report_that_cites_nothing_forwards_nothing() -> None:
    sources = _shared_evidence(2)
    assert forward_sources("No citations here.", sources) == ("No citations here.", {})


def test_a_report_citing_the_sanitized_user_content_form_still_forwards_the_source() -> None:
    (source,) = _shared_evidence(1)
    report = f"See [citation:Doc 0](#user-content-{source.handle})."

    content, artifact = forward_sources(report, [source])

    assert list(read_sources("task", content, artifact)) == [source.handle]


def test_it_respects_the_source_count_bound() -> None:
    sources = _shared_evidence(3)
    content, artifact = forward_sources(_cite(*sources), sources, max_sources=2)
    assert [r["id"] for r in artifact["knowledge_sources"]] == [sources[0].id, sources[1].id]
    assert len(read_sources("task", content, artifact)) == 2


def test_it_never_forwards_more_than_one_hundred_sources(validate_artifact: Check) -> None:
    sources = _shared_evidence(101)
    content, artifact = forward_sources(_cite(*sources), sources, max_sources=500, max_appendix_chars=10**6)
    assert len(artifact["knowledge_sources"]) == 100
    assert validate_artifact(artifact) == 1
    assert len(read_sources("task", content, artifact)) == 100


def test_it_respects_the_appendix_character_bound_and_skips_what_cannot_fit() -> None:
    small = _shared_evidence(1)[0]
    large = _shared_evidence(1, size=100)[0]
    report = _cite(large, small)

    content, artifact = forward_sources(report, [large, small], max_appendix_chars=200)

    assert len(content) - len(report) <= 200
    assert [r["id"] for r in artifact["knowledge_sources"]] == [small.id]
    # The skipped source is not evidence anywhere: its citation stays unresolved.
    assert list(read_sources("task", content, artifact)) == [small.handle]


def test_native_and_shared_sources_travel_in_the_coexistence_form(validate_artifact: Check) -> None:
    (native,) = _native_evidence(1)
    (shared,) = _shared_evidence(1)

    content, artifact = forward_sources(_cite(native, shared), [native, shared])

    assert artifact["knowledge_sources"]["sources"][0]["id"] == native.id
    assert artifact["knowledge_sources_version"] == 1
    assert [r["id"] for r in artifact["retrieval_sources"]] == [shared.id]
    assert validate_artifact(artifact) == 2
    found = read_sources("task", content, artifact)
    assert found == {native.handle: native, shared.handle: shared}


def test_a_forwarded_native_source_keeps_its_locators_and_truncation_flag(validate_artifact: Check) -> None:
    record = native_record(3, truncated=True, pages=[7])
    (native,) = read_sources("knowledge_search", *native_message([record])).values()

    content, artifact = forward_sources(_cite(native), [native])

    assert artifact == {"knowledge_sources": {"version": 1, "sources": [record]}}
    assert validate_artifact(artifact) == 1
    assert read_sources("task", content, artifact) == {native.handle: native}
