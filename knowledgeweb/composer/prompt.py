"""The chat request a turn sends: instructions, the conversation so far, the evidence, the question.

Pure functions (no Django, no HTTP), so every budget rule is unit-tested directly.

Evidence is listed newest tool message first in what is *kept*, but shown to the
model in thread order; when the budget runs out, the oldest evidence is what is
dropped (a follow-up is most likely about what was just retrieved). Each source
costs the characters of its block as sent. The conversation (earlier questions and
answers) is bounded by the same number of characters, again dropping the oldest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from knowledgeweb.knowledge import Evidence

SYSTEM_PROMPT = """You answer questions using only the numbered sources below, which were retrieved for this conversation.

Rules:
- Use only what the sources say. If they do not answer the question, say so plainly.
- After each claim, cite the source(s) it comes from, exactly in this form: [citation:N](#HANDLE)
  where N is the source's number and HANDLE is the handle given for that source, for example
  [citation:2](#knowledge-source-0123456789abcdef0123456789abcdef).
- Cite only handles listed below. Never invent a handle, a URL or a source.
- Write plain Markdown prose. Do not add a list of references at the end."""

NO_SOURCES = "No sources were retrieved for this conversation."


@dataclass(frozen=True, slots=True)
class Turn:
    """One earlier message of the conversation."""

    role: str  # "user" or "assistant"
    content: str


@dataclass(frozen=True, slots=True)
class Prompt:
    messages: list[dict[str, str]]
    #: Handles sent, in the order (and with the numbers) the model saw them.
    numbered: list[str]
    #: Handles left out for the budget, oldest first.
    dropped: list[str] = field(default_factory=list)
    evidence_chars: int = 0
    turns_sent: int = 0
    turns_dropped: int = 0

    def metadata(self, budget: int) -> dict[str, Any]:
        return {
            "budget_chars": budget,
            "evidence_chars": self.evidence_chars,
            "sources_sent": len(self.numbered),
            "sources_dropped": len(self.dropped),
            "dropped_handles": self.dropped,
            "turns_sent": self.turns_sent,
            "turns_dropped": self.turns_dropped,
        }


class ContextOverBudgetError(Exception):
    """Not even the newest source fits in the budget: nothing would be worth sending."""

    def __init__(self, needed: int, budget: int) -> None:
        super().__init__(
            f"The newest evidence alone needs {needed:,} characters, more than this answer model's context "
            f"budget of {budget:,} characters; no request was sent. Ask an admin to raise the budget."
        )
        self.needed = needed
        self.budget = budget


def source_block(number: int, source: Evidence) -> str:
    lines = [f"[{number}] handle: {source.handle}", f"title: {source.title}"]
    if source.dataset_name:
        lines.append(f"dataset: {source.dataset_name}")
    if source.page is not None:
        lines.append(f"page: {source.page}")
    lines.append("excerpt:")
    lines.append(source.excerpt)
    return "\n".join(lines)


def _unique(sources: list[Evidence]) -> list[Evidence]:
    """Each handle once: the viewer's evidence for it (the first claim), placed where it was last retrieved.

    A source retrieved again by a follow-up is as recent as that follow-up for the budget,
    but what the model reads must be what the citation will resolve to: the first claim.
    """
    first: dict[str, Evidence] = {}
    last: dict[str, int] = {}
    for position, source in enumerate(sources):
        first.setdefault(source.handle, source)
        last[source.handle] = position
    return [first[handle] for handle in sorted(last, key=last.__getitem__)]


def build_prompt(
    *, question: str, turns: Sequence[Turn], evidence: Sequence[Sequence[Evidence]], budget: int
) -> Prompt:
    """The request's messages. ``evidence`` holds each tool message's sources, oldest message first.

    Raises ``ContextOverBudgetError`` when evidence exists but its newest source does not fit.
    """
    flat = _unique([source for group in evidence for source in group])
    kept: list[Evidence] = []
    used = 0
    # Newest first: keep what fits, drop from the oldest end once the budget is spent.
    for index, source in enumerate(reversed(flat)):
        # The number is not known yet; a five-digit placeholder never undercounts.
        cost = len(source_block(99_999, source))
        if used + cost > budget:
            if index == 0:
                raise ContextOverBudgetError(cost, budget)
            break
        kept.append(source)
        used += cost
    kept.reverse()
    dropped = [source.handle for source in flat[: len(flat) - len(kept)]]
    blocks = [source_block(number, source) for number, source in enumerate(kept, start=1)]
    system = SYSTEM_PROMPT + "\n\nSources:\n\n" + ("\n\n".join(blocks) if blocks else NO_SOURCES)

    sent_turns: list[Turn] = []
    turn_chars = 0
    for turn in reversed(turns):
        if turn_chars + len(turn.content) > budget:
            break
        sent_turns.append(turn)
        turn_chars += len(turn.content)
    sent_turns.reverse()
    messages = [{"role": "system", "content": system}]
    messages += [{"role": turn.role, "content": turn.content} for turn in sent_turns]
    messages.append({"role": "user", "content": question})
    return Prompt(
        messages=messages,
        numbered=[source.handle for source in kept],
        dropped=dropped,
        evidence_chars=sum(len(block) for block in blocks),
        turns_sent=len(sent_turns),
        turns_dropped=len(turns) - len(sent_turns),
    )
