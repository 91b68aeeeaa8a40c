"""enforce_output_budget keeps evidence and text consistent when it cuts content (docs/contract.md#formatting-and-budgets)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgeweb.knowledge import (
    RetrievalResult,
    enforce_output_budget,
    find_citations,
    format_result,
    read_sources,
)
from tests.unit.strategies import (
    artifact_records,
    budgets,
    native_content,
    native_record,
    results,
    shared_content,
    shared_record,
)

Check = Callable[[dict[str, Any] | None], int]

FIRST = shared_record(title="First", excerpt="First evidence, short.")
SECOND = shared_record(title="Second", excerpt="Second evidence. " * 20)


def _shared(*records: dict[str, Any], **extra: Any) -> tuple[str, dict[str, Any]]:
    artifact = {"knowledge_sources_version": 1, "knowledge_sources": list(records), **extra}
    return shared_content(list(records)), artifact


def _live_handles(content: str) -> set[str | None]:
    return {c.handle for c in find_citations(content) if c.state == "candidate"}


def test_content_within_the_limit_comes_back_unchanged() -> None:
    content, artifact = _shared(FIRST, SECOND, usage={"tokens": 5})
    assert enforce_output_budget(content, artifact, len(content)) == (content, artifact)


def test_a_cut_drops_the_record_whose_excerpt_is_gone_and_unlinks_its_citation(
    validate_artifact: Check,
) -> None:
    content, artifact = _shared(FIRST, SECOND)
    limit = content.index("Second evidence.") + 200

    out, kept = enforce_output_budget(content, artifact, limit)

    assert len(out) <= limit
    assert kept is not None
    assert kept["knowledge_sources"] == [FIRST]
    assert f"[citation:First](#knowledge-source-{FIRST['id']})" in out
    # The orphaned link is now its plain label.
    assert f"#knowledge-source-{SECOND['id']}" not in out
    assert "citation:Second" in out
    assert _live_handles(out) == {f"knowledge-source-{FIRST['id']}"}
    assert list(read_sources("knowledge_search", out, kept)) == [f"knowledge-source-{FIRST['id']}"]
    assert validate_artifact(kept) == 1


def test_an_orphan_link_whose_label_holds_brackets_is_unlinked_too() -> None:
    # A delegated report is model-written Markdown: labels may nest brackets.
    report = f"See [citation:[1] Second](#knowledge-source-{SECOND['id']}) for details.\n"
    content = report + "x" * 300
    artifact = {"knowledge_sources_version": 1, "knowledge_sources": [SECOND]}

    out, kept = enforce_output_budget(content, artifact, 150)

    assert kept is not None
    assert kept["knowledge_sources"] == []
    assert _live_handles(out) == set()
    assert "[1] Second" in out


def test_unrelated_artifact_keys_survive_a_cut() -> None:
    content, artifact = _shared(FIRST, SECOND, usage={"tokens": 5}, trace=["a", "b"])
    _, kept = enforce_output_budget(content, artifact, 60)
    assert kept is not None
    assert kept["usage"] == {"tokens": 5}
    assert kept["trace"] == ["a", "b"]


def test_the_callers_content_and_artifact_are_not_mutated() -> None:
    content, artifact = _shared(FIRST, SECOND, usage={"tokens": 5})
    before = copy.deepcopy(artifact)
    enforce_output_budget(content, artifact, 80)
    assert artifact == before


def test_a_native_snapshot_stays_a_native_snapshot(validate_artifact: Check) -> None:
    first = native_record(1)
    second = native_record(2, text="Second native text. " * 30)
    content = native_content([first, second])
    artifact = {"knowledge_sources": {"version": 1, "sources": [first, second]}, "run": 7}

    out, kept = enforce_output_budget(content, artifact, content.index("Second native text.") + 100)

    assert kept == {"knowledge_sources": {"version": 1, "sources": [first]}, "run": 7}
    assert validate_artifact(kept) == 1
    assert list(read_sources("knowledge_search", out, kept)) == [f"knowledge-{first['id']}"]


def test_the_coexistence_form_keeps_its_native_snapshot_where_it_was(validate_artifact: Check) -> None:
    native = native_record(1)
    shared = shared_record(title="Shared", excerpt="Shared evidence. " * 20)
    content = native_content([native]) + "\n\n" + shared_content([shared])
    artifact = {
        "knowledge_sources": {"version": 1, "sources": [native]},
        "knowledge_sources_version": 1,
        "retrieval_sources": [shared],
    }

    _, kept = enforce_output_budget(content, artifact, len(native_content([native])) + 150)

    assert kept == {
        "knowledge_sources": {"version": 1, "sources": [native]},
        "knowledge_sources_version": 1,
        "retrieval_sources": [],
    }
    assert validate_artifact(kept) == 2


def test_a_limit_smaller_than_the_notice_keeps_no_evidence() -> None:
    content, artifact = _shared(FIRST, usage=1)
    out, kept = enforce_output_budget(content, artifact, 10)
    assert len(out) <= 10
    assert kept == {"knowledge_sources_version": 1, "knowledge_sources": [], "usage": 1}


def test_a_non_dict_artifact_comes_back_as_none() -> None:
    assert enforce_output_budget("x" * 50, ["not", "a", "dict"], 20)[1] is None
    assert enforce_output_budget("short", None, 20) == ("short", None)


@settings(max_examples=100, deadline=None)
@given(
    result=results(),
    budget=budgets,
    cut=st.floats(0, 1.1),
    extra=st.dictionaries(st.sampled_from(["usage", "trace", "x"]), st.integers(), max_size=2),
)
def test_after_any_cut_no_orphan_link_or_evidence_less_record_survives(
    validate_artifact: Check,
    result: RetrievalResult,
    budget: dict[str, Any],
    cut: float,
    extra: dict[str, int],
) -> None:
    content, artifact = format_result(result, **budget)
    artifact = {**artifact, **extra}
    limit = int(len(content) * cut)

    out, kept = enforce_output_budget(content, artifact, limit)

    assert kept is not None
    if limit >= len(content):
        assert (out, kept) == (content, artifact)
    assert len(out) <= max(limit, 0) or out == content
    for key, value in extra.items():
        assert kept[key] == value
    # A native snapshot is never replaced; the form is unchanged.
    assert type(kept["knowledge_sources"]) is type(artifact["knowledge_sources"])
    assert validate_artifact(kept) == 1
    before = [record for _, _, record in artifact_records(artifact)]
    survivors = artifact_records(kept)
    # Records are dropped, never edited: no excerpt is shortened under an existing id.
    assert all(record in before for _, _, record in survivors)
    for handle, excerpt, _ in survivors:
        assert f"#{handle}" in out
        assert excerpt in out
    assert _live_handles(out) <= {handle for handle, _, _ in survivors}
    assert sorted(read_sources("knowledge_search", out, kept)) == sorted(h for h, _, _ in survivors)
