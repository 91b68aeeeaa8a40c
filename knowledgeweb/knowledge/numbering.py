"""The one numbering of a thread's sources (docs/decisions/0036-the-reader-honest-words-one-numbering.md).

A source's number is its place in the order of first citation across the thread's
answers: the first source an answer cites is [1], the next new one [2], and a source
keeps its number wherever it is cited again. The page, the live stream, the Markdown
export and the citation report all take their numbers from this function (the numbers
are fixed when an answer is written and stored with the thread).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def number_sources(cited: Iterable[str], numbers: Mapping[str, int] | None = None) -> dict[str, int]:
    """``numbers`` extended with each handle of ``cited`` not yet numbered, in order.

    ``cited`` is the handles of resolved citations in the order they are cited (repeats
    allowed); ``numbers`` the numbers already given (1..n, as this function gives them).
    Returns a new mapping; the argument is never changed.
    """
    out = dict(numbers or {})
    for handle in cited:
        if handle not in out:
            out[handle] = len(out) + 1
    return out
