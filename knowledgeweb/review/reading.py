"""What review mode shows beside its items: each citation's claim and cited source, each
answer's words, and the queues' guidelines rendered through the answers' sanitizer."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from knowledgeweb.knowledge import Evidence
from knowledgeweb.knowledge.linkgrammar import parse_markdown
from knowledgeweb.review.access import ThreadAccess
from knowledgeweb.review.models import ReviewQueue
from knowledgeweb.threads.models import MessageRender, MessageType, Thread
from knowledgeweb.threads.rendering.claims import citation_claims
from knowledgeweb.threads.rendering.markdown import markdown_to_html
from knowledgeweb.threads.rendering.sanitizer import sanitize_html
from knowledgeweb.threads.selectors import thread_citations


def guidelines_html(text: str) -> str:
    """A queue's guidelines (Markdown) as HTML, through the answers' own renderer and sanitizer:
    raw HTML is shown as text and every attribute passes the same allowlist."""
    return sanitize_html(markdown_to_html(text)) if text.strip() else ""


def thread_guidelines(*, access: ThreadAccess) -> list[tuple[ReviewQueue, str]]:
    """Each queue the reader reviews this thread in, with its guidelines as sanitized HTML."""
    return [(queue, guidelines_html(queue.guidelines)) for queue in access.queues]


@dataclass(frozen=True, slots=True)
class ItemEvidence:
    """What a reviewer compares for one citation: the claim and the source it cites."""

    claim: str
    source: Evidence | None


def thread_item_evidence(*, thread: Thread) -> dict[tuple[UUID, int], ItemEvidence]:
    """Each citation's claim sentence and cited source (found citations only carry one), by
    (message id, position). Read from the stored renders and the messages' own text."""
    out: dict[tuple[UUID, int], ItemEvidence] = {}
    for entry in thread_citations(thread=thread):
        claims = citation_claims(parse_markdown(entry.message.content))
        for position, citation in enumerate(entry.citations, start=1):
            claim = claims[position - 1] if position <= len(claims) else ""
            out[(entry.message.id, position)] = ItemEvidence(claim, citation.source)
    return out


def answer_texts(*, thread: Thread) -> dict[UUID, str]:
    """Each answer's words as a reader sees them (plain text, stored with its render)."""
    rows = MessageRender.objects.filter(thread=thread, message__type=MessageType.AI).values_list(
        "message_id", "text"
    )
    return dict(rows)
