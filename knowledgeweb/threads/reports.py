"""The citation report: every citation of every AI message, with its verdict (docs/architecture.md#http-api).

Read from the renders stored at write (``MessageRender.citations``): a report
never parses Markdown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from knowledgeweb.knowledge import Evidence, classify_href
from knowledgeweb.threads.evidence import REASON_ONLY_LATER, ResolvedCitation, evidence_from_json
from knowledgeweb.threads.models import Message, MessageRender, MessageType

__all__ = ["REASON_ONLY_LATER", "MessageCitations", "messages_citations"]


@dataclass(frozen=True, slots=True)
class MessageCitations:
    message: Message
    citations: list[ResolvedCitation]


def messages_citations(
    messages: Sequence[Message], renders: Mapping[UUID, MessageRender], *, numbers: Mapping[str, int]
) -> list[MessageCitations]:
    """For each AI message in order, its citations as resolved (at write) against the evidence before it.

    ``numbers`` are the thread's source numbers (``Thread.source_numbers``): a resolved
    citation carries its source's.
    """
    sources: dict[str, Evidence] = {}
    for message in messages:
        if message.type == MessageType.TOOL:
            for record in renders[message.id].sources:
                sources.setdefault(record["handle"], evidence_from_json(record))
    report: list[MessageCitations] = []
    for message in messages:
        if message.type == MessageType.AI:
            citations = [_citation(stored, sources, numbers) for stored in renders[message.id].citations]
            report.append(MessageCitations(message=message, citations=citations))
    return report


def _citation(
    stored: Mapping[str, Any], sources: Mapping[str, Evidence], numbers: Mapping[str, int]
) -> ResolvedCitation:
    handle = stored.get("handle")
    source = sources.get(handle) if stored["state"] == "resolved" and isinstance(handle, str) else None
    reason = str(stored["reason"])
    if stored["state"] == "unresolved":
        # Say so when an unresolved citation's evidence does exist, but only after it.
        _, cited = classify_href(str(stored["href"]))
        if cited is not None and cited in sources:
            reason = REASON_ONLY_LATER
    mismatch = source is not None and stored.get("label_mismatch") is True
    return ResolvedCitation(
        str(stored["label"]),
        str(stored["href"]),
        stored["state"],
        source,
        reason,
        mismatch,
        numbers.get(source.handle) if source is not None else None,
    )
