"""SourceAccumulator validates only what changed in a growing message list (docs/contract.md#delegation-and-accumulation)."""

from __future__ import annotations

from typing import Any

from knowledgeweb.knowledge import SourceAccumulator
from tests.unit.strategies import native_message, native_record, shared_message, shared_record


def _tool(*excerpts: str, name: str = "knowledge_search") -> dict[str, Any]:
    records = [shared_record(title=f"Doc {e}", excerpt=e) for e in excerpts]
    content, artifact = shared_message(records)
    return {"type": "tool", "name": name, "content": content, "artifact": artifact}


def _handle(excerpt: str) -> str:
    return f"knowledge-source-{shared_record(title=f'Doc {excerpt}', excerpt=excerpt)['id']}"


def _assistant(text: str) -> dict[str, Any]:
    return {"type": "assistant", "name": None, "content": text, "artifact": None}


def test_it_validates_exactly_one_message_after_one_is_appended() -> None:
    accumulator = SourceAccumulator()
    messages: list[Any] = [_tool("a"), _assistant("ok"), _tool("b")]
    accumulator.update(messages)
    assert accumulator.validated == 2

    messages = [*messages, _tool("c")]
    sources = accumulator.update(messages)

    assert accumulator.validated == 3
    assert list(sources) == [_handle("a"), _handle("b"), _handle("c")]


def test_an_unchanged_snapshot_rebuilt_from_fresh_objects_validates_nothing() -> None:
    accumulator = SourceAccumulator()
    accumulator.update([_tool("a"), _tool("b")])
    # A new snapshot of the same thread: equal messages, new objects.
    sources = accumulator.update([_tool("a"), _tool("b")])
    assert accumulator.validated == 2
    assert list(sources) == [_handle("a"), _handle("b")]


def test_it_restarts_from_the_first_changed_message() -> None:
    accumulator = SourceAccumulator()
    accumulator.update([_tool("a"), _tool("b"), _tool("c"), _tool("d")])
    assert accumulator.validated == 4

    changed = [_tool("a"), _tool("B"), _tool("c"), _tool("d")]
    sources = accumulator.update(changed)

    # b changed, so b, c and d are validated again; a is not. The source b carried
    # was really seen, so it stays; B joins after the ones already known.
    assert accumulator.validated == 7
    assert list(sources) == [_handle("a"), _handle("b"), _handle("c"), _handle("d"), _handle("B")]


def test_sources_survive_compaction_that_shortens_the_list() -> None:
    accumulator = SourceAccumulator()
    accumulator.update([_tool("a"), _tool("b"), _tool("c")])

    compacted = [_assistant("Summary of earlier work."), _tool("c"), _tool("d")]
    sources = accumulator.update(compacted)

    # The whole list changed from position 0: c and d are validated, nothing is forgotten.
    assert accumulator.validated == 3 + 2
    assert list(sources) == [_handle("a"), _handle("b"), _handle("c"), _handle("d")]


def test_a_forged_replacement_after_compaction_adds_nothing() -> None:
    accumulator = SourceAccumulator()
    accumulator.update([_tool("a")])
    forged = _tool("b")
    forged["artifact"]["knowledge_sources"][0]["excerpt"] = "not in the content"
    sources = accumulator.update([_assistant("Summary."), forged])
    assert list(sources) == [_handle("a")]


def test_it_treats_none_as_an_empty_message() -> None:
    accumulator = SourceAccumulator()
    sources = accumulator.update([None, _tool("a"), None])
    assert list(sources) == [_handle("a")]
    assert accumulator.validated == 1

    # A None that becomes a message is a change at that position.
    sources = accumulator.update([None, _tool("a"), _tool("b")])
    assert list(sources) == [_handle("a"), _handle("b")]
    assert accumulator.validated == 2


def test_it_keeps_at_most_one_hundred_sources_the_earliest_first() -> None:
    first = _tool(*[f"first {n}" for n in range(60)])
    second = _tool(*[f"second {n}" for n in range(60)])

    sources = SourceAccumulator().update([first, second])

    assert len(sources) == 100
    assert list(sources)[:60] == [_handle(f"first {n}") for n in range(60)]
    assert list(sources)[-1] == _handle("second 39")


def test_it_keeps_the_first_evidence_when_a_handle_repeats() -> None:
    record = native_record(1, text="The earlier text.")
    earlier_content, earlier = native_message([record])
    later_content, later = native_message([native_record(1, text="A later text under the same id.")])
    messages = [
        {"type": "tool", "name": "knowledge_search", "content": earlier_content, "artifact": earlier},
        {"type": "tool", "name": "knowledge_search", "content": later_content, "artifact": later},
    ]

    sources = SourceAccumulator().update(messages)

    assert sources[f"knowledge-{record['id']}"].excerpt == "The earlier text."


def test_it_validates_only_tool_messages_with_the_ordinary_reader_rules() -> None:
    forged = _tool("a")
    forged["artifact"]["knowledge_sources"][0]["excerpt"] = "changed"
    accumulator = SourceAccumulator()
    sources = accumulator.update([_assistant(forged["content"]), forged, _tool("b", name="lightrag_search")])
    assert list(sources) == [_handle("b")]
    assert accumulator.validated == 2
