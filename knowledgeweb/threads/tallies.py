"""A thread's stored counters and source numbers, kept current by the writing services.

The header of a thread page and the thread list read these (``Thread.citations_*``,
``Thread.citations_mismatched``, ``Thread.answers_uncited``, ``Thread.source_numbers``);
nothing that reads a thread counts or numbers its answers again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from knowledgeweb.knowledge.numbering import number_sources

STATES = ("resolved", "unresolved", "malformed")
#: The ``Thread`` fields kept here; a reader refreshes them before use (writers move them in SQL).
TALLY_FIELDS = (
    "citations_resolved",
    "citations_unresolved",
    "citations_malformed",
    "citations_mismatched",
    "answers_uncited",
    "source_numbers",
)


class Rendered(Protocol):
    """What the counters read of a render (a stored ``MessageRender`` or a fresh rendering)."""

    @property
    def citations(self) -> Sequence[Mapping[str, Any]]: ...

    @property
    def uncited(self) -> bool: ...


def answer_uncited(*, html: str, tool_calls: Sequence[Any], citations: Sequence[Any]) -> bool:
    """Whether an AI message is an answer that cites nothing.

    An answer is a message with text to read; one that only asks its tools (it carries tool
    calls) is a step on the way to an answer, not an answer, and is never counted.
    """
    return not citations and not tool_calls and bool(html.strip())


def cited_handles(citations: Iterable[Mapping[str, Any]]) -> list[str]:
    """The handles of the resolved citations, in order (repeats kept)."""
    return [
        str(c["handle"])
        for c in citations
        if c.get("state") == "resolved" and isinstance(c.get("handle"), str)
    ]


def tallies_of(renders: Iterable[Rendered], numbers: Mapping[str, int] | None = None) -> dict[str, Any]:
    """The thread's counters and source numbers for these renders (in ``seq`` order), as
    ``Thread`` field values; ``numbers`` are the numbers already given (an append)."""
    counts = dict.fromkeys(STATES, 0)
    mismatched = uncited = 0
    cited: list[str] = []
    for render in renders:
        for citation in render.citations:
            counts[citation["state"]] = counts.get(citation["state"], 0) + 1
            if citation["state"] == "resolved" and citation.get("label_mismatch") is True:
                mismatched += 1
        cited.extend(cited_handles(render.citations))
        uncited += 1 if render.uncited else 0
    return {
        "citations_resolved": counts["resolved"],
        "citations_unresolved": counts["unresolved"],
        "citations_malformed": counts["malformed"],
        "citations_mismatched": mismatched,
        "answers_uncited": uncited,
        "source_numbers": number_sources(cited, numbers),
    }
