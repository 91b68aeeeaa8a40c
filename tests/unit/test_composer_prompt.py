"""The composer's request (budget, oldest evidence dropped first) and the streamed preview's sentences."""

from __future__ import annotations

from dataclasses import replace

import pytest

from knowledgeweb.composer.live import SentenceStream
from knowledgeweb.composer.prompt import ContextOverBudgetError, Turn, build_prompt, source_block
from knowledgeweb.knowledge import Evidence
from knowledgeweb.knowledge.ids import shared_handle


def _source(n: int, excerpt: str | None = None) -> Evidence:
    record = f"{n:032x}"
    return Evidence(
        handle=shared_handle(record),
        form="shared",
        id=record,
        provider="local",
        title=f"Note {n}",
        excerpt=excerpt if excerpt is not None else f"Kingfishers dive for fish, note {n}.",
    )


def _cost(source: Evidence) -> int:
    return len(source_block(99_999, source))


def test_everything_fits_numbered_in_thread_order_with_handles() -> None:
    old, new = [_source(1), _source(2)], [_source(3)]

    prompt = build_prompt(question="Why?", turns=[], evidence=[old, new], budget=10_000)

    assert prompt.numbered == [s.handle for s in [*old, *new]]
    assert prompt.dropped == []
    system = prompt.messages[0]["content"]
    assert f"[1] handle: {old[0].handle}" in system
    assert f"[3] handle: {new[0].handle}" in system
    assert "[citation:N](#HANDLE)" in system
    assert prompt.messages[-1] == {"role": "user", "content": "Why?"}


def test_the_oldest_evidence_is_dropped_first_and_said_so() -> None:
    sources = [_source(n) for n in range(1, 6)]
    budget = _cost(sources[0]) * 2 + 5

    prompt = build_prompt(question="q", turns=[], evidence=[sources[:3], sources[3:]], budget=budget)

    assert prompt.numbered == [sources[3].handle, sources[4].handle]
    assert prompt.dropped == [s.handle for s in sources[:3]]
    meta = prompt.metadata(budget)
    assert (meta["sources_sent"], meta["sources_dropped"]) == (2, 3)
    assert meta["evidence_chars"] <= budget
    assert sources[0].handle not in prompt.messages[0]["content"]


def test_a_newest_source_larger_than_the_budget_is_context_over_budget() -> None:
    big = _source(1, "word " * 400)

    with pytest.raises(ContextOverBudgetError) as caught:
        build_prompt(question="q", turns=[], evidence=[[big]], budget=500)

    assert "context budget of 500 characters" in str(caught.value)
    assert caught.value.needed == _cost(big)


def test_no_evidence_is_said_and_not_an_error() -> None:
    prompt = build_prompt(question="q", turns=[], evidence=[[]], budget=500)

    assert "No sources were retrieved" in prompt.messages[0]["content"]
    assert prompt.numbered == []


def test_the_conversation_keeps_its_newest_turns_within_the_budget() -> None:
    turns = [Turn("user", "a" * 300), Turn("assistant", "b" * 300), Turn("user", "c" * 300)]

    prompt = build_prompt(question="q", turns=turns, evidence=[], budget=700)

    assert [m["content"][0] for m in prompt.messages[1:-1]] == ["b", "c"]
    assert (prompt.turns_sent, prompt.turns_dropped) == (2, 1)


def test_sentences_complete_across_pieces_with_citations_resolved_or_inert() -> None:
    known = _source(1)
    stream = SentenceStream({known.handle: known})
    invented = shared_handle("f" * 32)
    text = (
        f"Kingfishers dive. [citation:1](#{known.handle}) They eat fish [citation:x](#{invented}). "
        "A bad one [citation:2](#knowledge-source-nothex). Tail"
    )

    out = [
        parts for piece in (text[i : i + 7] for i in range(0, len(text), 7)) for parts in stream.feed(piece)
    ]
    out += list(stream.finish())

    assert len(out) == 4
    assert out[0] == [
        {"text": "Kingfishers dive. "},
        {"cite": "resolved", "handle": known.handle, "number": 1, "title": "Note 1"},
        {"text": " "},
    ]
    assert {"cite": "unresolved", "label": "citation:x"} in out[1]
    assert {"cite": "malformed", "label": "citation:2"} in out[2]
    # The paragraph's end is a line end, which the page's script turns into a new paragraph.
    assert out[3] == [{"text": "Tail\n"}]
    assert "".join(p.get("text", "") for parts in out for p in parts).count("Kingfishers") == 1


def test_an_ordinary_link_shows_its_label_in_the_preview() -> None:
    stream = SentenceStream({})

    (parts,) = [*stream.feed("See [the site](#top)."), *stream.finish()]

    assert parts == [{"text": "See the site.\n"}]


def test_a_source_retrieved_twice_is_sent_once_as_first_claimed_and_kept_as_recent() -> None:
    sources = [_source(1), _source(2), _source(3)]
    # The same handle claimed again later (a native handle can be) with other text.
    later = [replace(sources[0], excerpt="Something else.")]
    budget = _cost(sources[0]) * 2 + 5

    prompt = build_prompt(question="q", turns=[], evidence=[sources, later], budget=budget)

    assert prompt.numbered == [sources[2].handle, sources[0].handle]
    assert prompt.dropped == [sources[1].handle]
    assert "Something else." not in prompt.messages[0]["content"]
    assert sources[0].excerpt in prompt.messages[0]["content"]
