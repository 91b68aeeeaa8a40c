"""What a re-render does once rather than per handle, per message or per source, with the same output."""

from __future__ import annotations

import random
import re

import pytest

from knowledgeweb.knowledge import Evidence
from knowledgeweb.knowledge.citations import contains_handle
from knowledgeweb.library.passages import passage_page, passage_path
from knowledgeweb.threads.rendering import sources
from knowledgeweb.threads.rendering.pipeline import _fill_slots, _slot_mark

HEX = "0123456789abcdef" * 2


def _by_pattern(text: str, handle: str) -> bool:
    """``contains_handle`` as it was written: a pattern per handle."""
    return re.search("#" + re.escape(handle) + r"(?![A-Za-z0-9_-])", text) is not None


def test_contains_handle_answers_as_the_pattern_did() -> None:
    rng = random.Random(25)
    handle = f"knowledge-{HEX}-1"
    pieces = ["#", handle, f"#{handle}", "-", "0", "_", "Z", "é", " ", ")", "\n", "#knowledge-", "x"]
    for _ in range(3_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        assert contains_handle(text, handle) == _by_pattern(text, handle), text
    # A handle holding what a pattern would read as syntax is searched for literally.
    assert contains_handle("see #a.b+c", "a.b+c")
    assert not contains_handle("see #aXb+c", "a.b+c")


def test_a_slot_of_another_message_is_left_as_text() -> None:
    mark, other = _slot_mark("this message"), _slot_mark("another message")
    html = f"<p>{{{other}:0}} one {{{mark}:0}} two {{{mark}:1}}</p>"
    assert _fill_slots(html, mark, ["<a>1</a>", "<a>2</a>"]) == (
        f"<p>{{{other}:0}} one <a>1</a> two <a>2</a></p>"
    )


def _local(n: int) -> Evidence:
    return Evidence(
        handle=f"knowledge-source-{n:032x}",
        form="shared",
        id=f"{n:032x}",
        provider="local",
        title=f"Handbook <{n}> & co",
        excerpt=f'First sentence {n}. Second "one" & <b>more</b>.',
        dataset_name="HR & pay",
        url="https://example.org/a?b=1&c=<2>",
        pages=(n, n + 1),
    )


def test_a_tool_messages_entries_find_the_passage_page_once_and_read_as_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    own = {source.handle: source for source in map(_local, range(20))}
    one_by_one = {handle: sources.source_entry_parts(source) for handle, source in own.items()}
    calls: list[str] = []

    def counted() -> str:
        calls.append("reverse")
        return passage_page()

    monkeypatch.setattr(sources, "passage_page", counted)
    assert sources.source_entries(own) == one_by_one
    assert len(calls) == 1
    assert sources.source_entries({}) == {}
    assert len(calls) == 1
    assert passage_path(collection_name="c", excerpt="e", page=passage_page()) == passage_path(
        collection_name="c", excerpt="e"
    )
