"""The streamed preview: linear in the answer, and what it shows is what is stored (issue 22, defect 2).

Cost is counted in operations (``SentenceStream.work``: characters parsed and scanned),
never in seconds: for every shape of answer, filled to the 40,000-character cap, the
cost at the cap is at most five times the cost at a quarter of it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from knowledgeweb.composer.live import SentenceStream
from knowledgeweb.knowledge import Evidence, find_citations
from knowledgeweb.knowledge.ids import shared_handle
from knowledgeweb.threads.services.messages import MAX_PROSE_CHARS

SOURCE = Evidence(
    handle=shared_handle("1" * 32), form="shared", id="1" * 32, provider="local", title="Note 1", excerpt="x"
)
H = SOURCE.handle

#: Answers as a model (or an attacker) may write them, any length.
SHAPES: dict[str, Callable[[int], str]] = {
    "no sentence end": lambda n: ("word " * n)[:n],
    "a sentence every three characters": lambda n: ("a. " * n)[:n],
    "cited sentences": lambda n: (f"Kingfishers dive for fish [citation:1](#{H}). " * n)[:n],
    "paragraphs": lambda n: ("Herons wade in water. They stand still.\n\n" * n)[:n],
    "one long list": lambda n: ("- item one. two.\n" * n)[:n],
    "unmatched brackets": lambda n: ("[a " * n)[:n],
    "unmatched backticks": lambda n: ("`a. b " * n)[:n],
    "an open code fence": lambda n: ("```\n" + "code. line\n" * n)[:n],
    "a table": lambda n: ("| a | b |\n|---|---|\n" + "| x. y | z. |\n" * n)[:n],
    "emphasis markers": lambda n: ("snake_case *x. " * n)[:n],
    "line breaks": lambda n: ("x.\n" * n)[:n],
}


def _run(text: str, piece: int) -> tuple[list[list[dict[str, Any]]], int]:
    stream = SentenceStream({H: SOURCE})
    out = [parts for i in range(0, len(text), piece) for parts in stream.feed(text[i : i + piece])]
    out += list(stream.finish())
    return out, stream.work


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("piece", [7])
def test_the_cost_at_the_cap_is_at_most_five_times_the_cost_at_a_quarter(shape: str, piece: int) -> None:
    quarter = _run(SHAPES[shape](MAX_PROSE_CHARS // 4), piece)[1]
    cap = _run(SHAPES[shape](MAX_PROSE_CHARS), piece)[1]

    assert cap <= 5 * quarter, (shape, quarter, cap)
    # And linear outright: a bounded number of operations per character.
    assert cap <= 12 * MAX_PROSE_CHARS


def _flat(sentences: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The parts in order, adjacent text joined: what the page shows, however it was cut."""
    flat: list[dict[str, Any]] = []
    for part in (p for parts in sentences for p in parts):
        if "text" in part and flat and "text" in flat[-1]:
            flat[-1] = {"text": flat[-1]["text"] + part["text"]}
        else:
            flat.append(part)
    return flat


TRICKY = [
    f"Kingfishers dive. [citation:1](#{H}) They eat fish [citation:x](#{shared_handle('f' * 32)}). Tail",
    f"Code is code: `[citation:1](#{H})` stays text. A real one [citation:1](#{H}).",
    f"A label [over. two sentences](#{H}) is one citation. Next.",
    "Emphasis *across. a stop* and __strong. too__ then `code. span` end. More.",
    f"| A | B |\n|---|---|\n| one. [citation:1](#{H}) | two. |\n\nAfter the table.",
    f"- first. item [citation:1](#{H})\n- second. item\n\n  continued.\n\nDone.",
    "```\nfenced. code [citation:1](#x)\n```\nAfter. the fence.",
    f"Reference [citation:1][r] before.\n\n[r]: #{H}\n\nAfter. it.",
    "Line\r\nbreaks\rand. CR LF.\r\n\r\nNew paragraph.",
]


@pytest.mark.parametrize("answer", TRICKY)
def test_the_preview_is_the_same_however_the_answer_is_cut(answer: str) -> None:
    whole = _flat(_run(answer, len(answer))[0])

    for piece in (1, 2, 3, 5, 8, 13):
        assert _flat(_run(answer, piece)[0]) == whole, piece


@pytest.mark.parametrize("answer", TRICKY)
def test_the_preview_cites_what_the_stored_answer_cites(answer: str) -> None:
    """The link grammar decides for both: a citation in a code span is code in both."""
    shown = [p for p in _flat(_run(answer, 3)[0]) if "cite" in p]
    stored = find_citations(answer.replace("\r\n", "\n").replace("\r", "\n"))

    assert [p["cite"] for p in shown] == [
        "resolved" if c.handle == H else "unresolved" if c.state == "candidate" else "malformed"
        for c in stored
    ]


def test_a_citation_in_a_code_span_is_shown_as_code_text() -> None:
    (parts,) = _run(f"Write `[citation:1](#{H})` literally.", 4)[0]

    assert parts == [{"text": f"Write [citation:1](#{H}) literally.\n"}]


def test_a_sentence_is_sent_once_the_next_begins_and_nothing_later_can_change_it() -> None:
    stream = SentenceStream({H: SOURCE})

    assert list(stream.feed("Kingfishers dive. ")) == []
    # A bracket may still become a citation of the sentence just ended: it waits.
    assert list(stream.feed("[citation:1](#")) == []
    sent = list(stream.feed(f"{H}) They"))
    sent += list(stream.tick())

    assert sent == [
        [
            {"text": "Kingfishers dive. "},
            {"cite": "resolved", "handle": H, "number": 1, "title": "Note 1"},
            {"text": " "},
        ]
    ]
    assert list(stream.finish()) == [[{"text": "They\n"}]]


def test_a_silent_model_still_gets_its_completed_sentences_shown() -> None:
    """Between parses the open block must grow by half; a tick (the model is silent) parses anyway."""
    stream = SentenceStream({})
    first = "A long first sentence that sets the size of the open block. "

    assert list(stream.feed(first)) == []
    # Too little growth to parse again: the completed sentence is not seen yet.
    assert list(stream.feed("Then")) == []
    assert list(stream.tick()) == [[{"text": first}]]
    assert list(stream.finish()) == [[{"text": "Then\n"}]]


@pytest.mark.parametrize("shape", ["no sentence end", "paragraphs"])
def test_ticks_between_every_piece_keep_the_cost_linear(shape: str) -> None:
    """A model trickling its answer gets a tick (a second passed) between pieces: worst case, one each."""

    def cost(size: int) -> int:
        text = SHAPES[shape](size)
        stream = SentenceStream({})
        for i in range(0, len(text), 50):
            list(stream.feed(text[i : i + 50]))
            list(stream.tick())
        list(stream.finish())
        return stream.work

    assert cost(MAX_PROSE_CHARS) <= 5 * cost(MAX_PROSE_CHARS // 4)
