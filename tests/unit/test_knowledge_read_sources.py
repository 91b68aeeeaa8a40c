"""read_sources keeps only evidence that passes every rule of docs/contract.md#reading-evidence, and never raises."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgeweb.knowledge import read_sources
from tests.unit.strategies import (
    native_content,
    native_message,
    native_record,
    shared_content,
    shared_message,
    shared_record,
    spec_id,
)

GOOD = shared_record(provider="local", title="Good", excerpt="Evidence that stays valid.")


def _with_good(bad: dict[str, Any], content: str | None = None) -> tuple[str, dict[str, Any]]:
    """A message carrying ``bad`` followed by a valid record, so we see that only ``bad`` is dropped."""
    records = [bad, GOOD]
    text = shared_content(records) if content is None else content
    return text, {"knowledge_sources_version": 1, "knowledge_sources": records}


def _handle(record: dict[str, Any]) -> str:
    return f"knowledge-source-{record['id']}"


def test_it_reads_a_valid_shared_record_as_evidence_keyed_by_its_handle() -> None:
    record = shared_record(dataset_name="Handbook", url="https://example.org/guide", page=3)
    content, artifact = shared_message([record])

    found = read_sources("lightrag_search", content, artifact)

    assert list(found) == [_handle(record)]
    evidence = found[_handle(record)]
    assert (evidence.form, evidence.id, evidence.provider) == ("shared", record["id"], "lightrag")
    assert (evidence.title, evidence.excerpt) == (record["title"], record["excerpt"])
    assert (evidence.dataset_name, evidence.url, evidence.page) == (
        "Handbook",
        "https://example.org/guide",
        3,
    )


def test_it_rejects_a_wrong_id() -> None:
    bad = shared_record(title="Forged")
    bad["id"] = spec_id("lightrag", "Another title", bad["excerpt"])
    found = read_sources("knowledge_search", *_with_good(bad))
    assert list(found) == [_handle(GOOD)]


def test_it_rejects_an_excerpt_altered_by_one_character() -> None:
    honest = shared_record(excerpt="The boiler runs at 9 bar.")
    altered = {**honest, "excerpt": "The boiler runs at 8 bar."}
    # The content shows the altered text, so only the id check can catch it.
    found = read_sources("knowledge_search", *_with_good(altered))
    assert list(found) == [_handle(GOOD)]


def test_it_rejects_an_excerpt_that_is_not_in_the_content() -> None:
    bad = shared_record(excerpt="Text the model never saw.")
    content = f"[citation:{bad['title']}](#{_handle(bad)})\n" + shared_content([GOOD])
    found = read_sources("knowledge_search", *_with_good(bad, content))
    assert list(found) == [_handle(GOOD)]


def test_it_rejects_a_record_whose_handle_is_not_in_the_content() -> None:
    bad = shared_record(excerpt="Shown but never cited.")
    content = f"{bad['excerpt']}\n" + shared_content([GOOD])
    found = read_sources("knowledge_search", *_with_good(bad, content))
    assert list(found) == [_handle(GOOD)]


def test_it_does_not_take_a_longer_handle_for_the_records_handle() -> None:
    native = native_record(1)
    content = native_content([native]).replace(f"#knowledge-{native['id']}", f"#knowledge-{native['id']}0")
    assert (
        read_sources("knowledge_search", content, {"knowledge_sources": {"version": 1, "sources": [native]}})
        == {}
    )


@pytest.mark.parametrize("version", [2, 0, "1", None, True])
def test_it_rejects_an_envelope_of_another_version(version: Any) -> None:
    content, artifact = shared_message([GOOD])
    artifact["knowledge_sources_version"] = version
    assert read_sources("knowledge_search", content, artifact) == {}


def test_it_rejects_an_envelope_without_a_version() -> None:
    content, artifact = shared_message([GOOD])
    del artifact["knowledge_sources_version"]
    assert read_sources("knowledge_search", content, artifact) == {}


def test_it_rejects_a_native_snapshot_of_another_version() -> None:
    content, artifact = native_message([native_record(1)])
    artifact["knowledge_sources"]["version"] = 2
    assert read_sources("knowledge_search", content, artifact) == {}


def test_it_reads_one_hundred_records_but_rejects_one_hundred_and_one() -> None:
    records = [shared_record(excerpt=f"Excerpt number {n}.") for n in range(101)]
    content = shared_content(records)

    hundred = read_sources(
        "knowledge_search", content, {"knowledge_sources_version": 1, "knowledge_sources": records[:100]}
    )
    hundred_one = read_sources(
        "knowledge_search", content, {"knowledge_sources_version": 1, "knowledge_sources": records}
    )

    assert len(hundred) == 100
    assert hundred_one == {}


def test_it_reads_one_hundred_native_records_but_rejects_one_hundred_and_one() -> None:
    records = [native_record(n) for n in range(1, 102)]
    content = native_content(records)
    assert (
        len(read_sources("task", content, {"knowledge_sources": {"version": 1, "sources": records[:100]}}))
        == 100
    )
    assert read_sources("task", content, {"knowledge_sources": {"version": 1, "sources": records}}) == {}


@pytest.mark.parametrize("artifact", [None, [GOOD], "knowledge_sources", 1, ("a",)])
def test_it_rejects_an_artifact_that_is_not_a_dict(artifact: Any) -> None:
    assert read_sources("knowledge_search", shared_content([GOOD]), artifact) == {}


@pytest.mark.parametrize("records", [GOOD, "records", 3, None, {"0": GOOD}])
def test_it_rejects_records_that_are_not_a_list(records: Any) -> None:
    artifact = {"knowledge_sources_version": 1, "knowledge_sources": records}
    assert read_sources("knowledge_search", shared_content([GOOD]), artifact) == {}


def test_it_rejects_native_sources_that_are_not_a_list() -> None:
    record = native_record(1)
    artifact = {"knowledge_sources": {"version": 1, "sources": {"0": record}}}
    assert read_sources("knowledge_search", native_content([record]), artifact) == {}


@pytest.mark.parametrize(
    "url", ["javascript:alert(1)", "file:///etc/passwd", "data:text/html,<b>x</b>", "JavaScript:alert(1)"]
)
def test_it_rejects_a_url_that_is_not_http(url: str) -> None:
    bad = shared_record(url=url)
    found = read_sources("knowledge_search", *_with_good(bad))
    assert list(found) == [_handle(GOOD)]


def test_it_rejects_a_url_longer_than_2048_characters() -> None:
    bad = shared_record(url="https://example.org/" + "a" * 2029)
    assert len(bad["url"]) == 2049
    assert list(read_sources("knowledge_search", *_with_good(bad))) == [_handle(GOOD)]


@pytest.mark.parametrize("page", [0, -1, 1_000_001, True, 2.0, "3"])
def test_it_rejects_a_page_out_of_bounds_or_not_an_integer(page: Any) -> None:
    bad = shared_record(page=page)
    found = read_sources("knowledge_search", *_with_good(bad))
    assert list(found) == [_handle(GOOD)]


def test_it_accepts_the_extreme_pages() -> None:
    low, high = shared_record(excerpt="low", page=1), shared_record(excerpt="high", page=1_000_000)
    assert len(read_sources("knowledge_search", *shared_message([low, high]))) == 2


@pytest.mark.parametrize("title", ["", " ", "\t\n  "])
def test_it_rejects_a_blank_title(title: str) -> None:
    bad = shared_record(title=title)
    found = read_sources("knowledge_search", *_with_good(bad))
    assert list(found) == [_handle(GOOD)]


@pytest.mark.parametrize(
    ("field", "value"), [("title", "T" * 1025), ("excerpt", "e" * 200_001), ("dataset_name", "")]
)
def test_it_rejects_text_fields_out_of_bounds(field: str, value: str) -> None:
    overrides: dict[str, Any] = {field: value}
    bad = shared_record(**overrides)
    assert list(read_sources("knowledge_search", *_with_good(bad))) == [_handle(GOOD)]


@pytest.mark.parametrize("provider", ["RAGFlow", "1x", "", "a" * 65, "rag flow"])
def test_it_rejects_a_malformed_provider(provider: str) -> None:
    bad = shared_record(provider=provider)
    assert list(read_sources("knowledge_search", *_with_good(bad))) == [_handle(GOOD)]


@pytest.mark.parametrize("extra", [{"score": 0.9}, {"chunk_id": "c-1"}, {"truncated": False}])
def test_it_rejects_a_shared_record_with_extra_keys(extra: dict[str, Any]) -> None:
    bad = {**shared_record(excerpt="Record with an extra key."), **extra}
    assert list(read_sources("knowledge_search", *_with_good(bad))) == [_handle(GOOD)]


def test_it_rejects_a_native_record_with_extra_or_missing_keys() -> None:
    extra = native_record(1, score=0.5)
    missing = native_record(2)
    del missing["pages"]
    good = native_record(3)
    content, artifact = native_message([extra, missing, good])
    assert list(read_sources("knowledge_search", content, artifact)) == [f"knowledge-{good['id']}"]


def test_it_reads_a_native_snapshot_only_from_knowledge_search_and_task() -> None:
    content, artifact = native_message([native_record(1)])
    handle = f"knowledge-{native_record(1)['id']}"

    assert list(read_sources("knowledge_search", content, artifact)) == [handle]
    assert list(read_sources("task", content, artifact)) == [handle]
    for name in ["ragflow_search", "Knowledge_Search", "knowledge_search ", "", None]:
        assert read_sources(name, content, artifact) == {}


@pytest.mark.parametrize("name", [["task"], {"knowledge_search": 1}, 7])
def test_it_rejects_a_native_snapshot_when_the_tool_name_is_not_a_string(name: Any) -> None:
    content, artifact = native_message([native_record(1)])
    assert read_sources(name, content, artifact) == {}


def test_it_reads_the_shared_envelope_from_any_tool_name() -> None:
    content, artifact = shared_message([GOOD])
    for name in ["knowledge_search", "lightrag_relations", "anything", None]:
        assert list(read_sources(name, content, artifact)) == [_handle(GOOD)]


def test_it_reads_a_native_record_with_its_locators_and_truncation_flag() -> None:
    record = native_record(4, truncated=True, pages=[3, 4])
    content, artifact = native_message([record])

    evidence = read_sources("knowledge_search", content, artifact)[f"knowledge-{record['id']}"]

    assert (evidence.form, evidence.provider, evidence.title) == (
        "native",
        "ragflow",
        record["document_name"],
    )
    assert (evidence.excerpt, evidence.truncated, evidence.pages) == (record["text"], True, (3, 4))
    assert evidence.locators == {"dataset_id": "ds-4", "document_id": "doc-4", "chunk_id": "chunk-4"}


def test_it_rejects_a_native_record_whose_text_is_not_in_the_content() -> None:
    record = native_record(1)
    content = native_content([record]).replace(record["text"], "Something else entirely.")
    assert (
        read_sources("knowledge_search", content, {"knowledge_sources": {"version": 1, "sources": [record]}})
        == {}
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("id", f"{'a' * 32}-0"),
        ("provider", "lightrag"),
        ("chunk_id", ""),
        ("dataset_id", "x" * 257),
        ("document_name", "n" * 1025),
        ("truncated", "no"),
        ("pages", [0]),
        ("pages", list(range(1, 102))),
    ],
)
def test_it_rejects_a_native_record_that_breaks_a_bound(field: str, value: Any) -> None:
    record = native_record(1, **{field: value})
    content, artifact = native_message([record])
    assert read_sources("knowledge_search", content, artifact) == {}


def test_it_keeps_the_first_of_two_native_records_with_the_same_id() -> None:
    first = native_record(1, text="The first text, shown first.")
    second = native_record(1, text="A second text under the same id.", document_name="Impostor.pdf")
    content, artifact = native_message([first, second])

    found = read_sources("knowledge_search", content, artifact)

    assert list(found) == [f"knowledge-{first['id']}"]
    assert found[f"knowledge-{first['id']}"].excerpt == "The first text, shown first."
    assert found[f"knowledge-{first['id']}"].title == first["document_name"]


def test_it_keeps_one_evidence_for_a_shared_record_listed_twice() -> None:
    content, artifact = shared_message([GOOD, copy.deepcopy(GOOD)])
    assert list(read_sources("knowledge_search", content, artifact)) == [_handle(GOOD)]


def test_it_reads_both_forms_of_the_coexistence_form() -> None:
    native = native_record(1)
    shared = shared_record(provider="lightrag", title="Shared", excerpt="Shared evidence text.")
    content = native_content([native]) + "\n\n" + shared_content([shared])
    artifact = {
        "knowledge_sources": {"version": 1, "sources": [native]},
        "knowledge_sources_version": 1,
        "retrieval_sources": [shared],
        "unrelated": True,
    }

    found = read_sources("task", content, artifact)

    assert sorted(found) == sorted([f"knowledge-{native['id']}", _handle(shared)])
    # From another tool only the shared half counts: the native tool allowlist still applies.
    assert list(read_sources("lightrag_search", content, artifact)) == [_handle(shared)]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=40),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=20,
)
reserved_shaped = st.fixed_dictionaries(
    {},
    optional={
        "knowledge_sources_version": json_values,
        "knowledge_sources": json_values
        | st.lists(json_values, max_size=3)
        | st.fixed_dictionaries({"version": json_values, "sources": st.lists(json_values, max_size=3)}),
        "retrieval_sources": json_values | st.lists(json_values, max_size=3),
    },
)


@settings(max_examples=150, deadline=None)
@given(name=json_values, content=json_values, artifact=json_values | reserved_shaped)
def test_it_never_raises_whatever_the_message_holds(name: Any, content: Any, artifact: Any) -> None:
    assert read_sources(name, content, artifact) == {}
