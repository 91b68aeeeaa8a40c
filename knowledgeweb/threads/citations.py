"""The citation report: every citation of every AI message, with its verdict (SPEC §7)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from uuid import UUID

from knowledgeweb.knowledge import Evidence, classify_href, find_citations
from knowledgeweb.threads.evidence import (
    ResolvedCitation,
    evidence_before,
    messages_sources,
    resolve_citation,
)
from knowledgeweb.threads.models import Message, MessageType

REASON_ONLY_LATER = (
    "Its evidence appears only in a later tool message; a citation resolves only against earlier ones."
)


@dataclass(frozen=True, slots=True)
class MessageCitations:
    message: Message
    citations: list[ResolvedCitation]


def messages_citations(messages: Sequence[Message]) -> list[MessageCitations]:
    """For each AI message in order, its citations resolved against the evidence before it."""
    # One cache round trip for the whole thread, shared by the walk and the explanation below.
    sources = messages_sources(messages)
    report: list[MessageCitations] = []
    for message, available in evidence_before(messages, sources=sources):
        if message.type == MessageType.AI:
            report.append(
                MessageCitations(
                    message=message,
                    citations=[resolve_citation(c, available) for c in find_citations(message.content)],
                )
            )
    return _explain_later_evidence(report, sources)


def _explain_later_evidence(
    report: list[MessageCitations], sources: Mapping[UUID, dict[str, Evidence]]
) -> list[MessageCitations]:
    """Say so when an unresolved citation's evidence does exist, but only after it."""
    if not any(c.state == "unresolved" for entry in report for c in entry.citations):
        return report
    later_handles = {handle for found in sources.values() for handle in found}
    explained: list[MessageCitations] = []
    for entry in report:
        citations = []
        for citation in entry.citations:
            _, handle = classify_href(citation.href)
            if citation.state == "unresolved" and handle in later_handles:
                citation = ResolvedCitation(
                    citation.label, citation.href, "unresolved", None, REASON_ONLY_LATER
                )
            citations.append(citation)
        explained.append(MessageCitations(message=entry.message, citations=citations))
    return explained
