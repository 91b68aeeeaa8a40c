"""Rendering one message, given the evidence before it: what the renders service stores.

A pure function of the message and the evidence available before it (and of
the renderer's code, named by its version: ``threads.rendering.version``).
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass, field
from typing import Any

from django.template.loader import render_to_string
from django.utils.html import format_html

from knowledgeweb.knowledge import Evidence
from knowledgeweb.knowledge.linkgrammar import parse_markdown
from knowledgeweb.threads.models import Message, MessageStatus, MessageType
from knowledgeweb.threads.rendering.claims import answer_text
from knowledgeweb.threads.rendering.export import ExportPart, message_export_parts
from knowledgeweb.threads.rendering.pipeline import render_assistant_content
from knowledgeweb.threads.rendering.resolution import CitationHook
from knowledgeweb.threads.rendering.sources import source_entries
from knowledgeweb.threads.rendering.tools import build_tool_view, generic_view, signed_view, unsigned_view
from knowledgeweb.threads.tallies import answer_uncited


@dataclass(frozen=True, slots=True)
class MessageRendering:
    """A message's HTML fragment, citations, own evidence, panel entries and export part."""

    html: str
    citations: list[dict[str, Any]] = field(default_factory=list)
    sources: dict[str, Evidence] = field(default_factory=dict)
    entries: dict[str, list[str]] = field(default_factory=dict)
    export: list[ExportPart] = field(default_factory=list)
    #: An answer with text that cites nothing (``threads.tallies.answer_uncited``).
    uncited: bool = False
    #: The words a reader sees (what the thread search reads); empty for tool output.
    text: str = ""

    def tally(self, state: str) -> int:
        return sum(1 for citation in self.citations if citation["state"] == state)


def citation_json(hook: CitationHook) -> dict[str, Any]:
    """A citation as stored with its message's render (``MessageRender.citations``)."""
    verdict = hook.verdict
    return {
        "label": verdict.label,
        "href": verdict.href,
        "state": verdict.state,
        "reason": verdict.reason,
        "handle": verdict.source.handle if verdict.source is not None else None,
        "anchor": hook.anchor,
        "passage": list(hook.passage),
        "label_mismatch": hook.label_mismatch,
    }


def citation_anchor_prefix(message: Message) -> str:
    """The prefix of a message's citation ids: unique in the thread, known before its seq is."""
    return f"cite-{message.id.hex}"


def render_message(
    message: Message,
    available: Mapping[str, Evidence],
    own: Mapping[str, Evidence],
    unsigned: Set[str] = frozenset(),
) -> MessageRendering:
    """Render ``message``; ``available`` is the evidence before it, ``own`` its validated sources,
    ``unsigned`` the handles whose evidence an import stripped before it."""
    if message.type == MessageType.AI:
        rendered = render_assistant_content(
            message.content, available, anchor_prefix=citation_anchor_prefix(message), unsigned=unsigned
        )
        citations = [citation_json(hook) for hook in rendered.hooks]
        return MessageRendering(
            html=rendered.html,
            citations=citations,
            export=message_export_parts(
                rendered.parsed, rendered.verdicts, [hook.label_mismatch for hook in rendered.hooks]
            ),
            uncited=answer_uncited(html=rendered.html, tool_calls=message.tool_calls, citations=citations),
            text=answer_text(rendered.parsed),
        )
    if message.type == MessageType.TOOL:
        failed = message.status == MessageStatus.ERROR
        check = message.evidence_check if isinstance(message.evidence_check, dict) else {}
        if failed:
            tool = generic_view(message.content)
        elif check.get("state") == "signed":
            tool = signed_view(own)
        elif check.get("state") == "unsigned":
            tool = unsigned_view(message.content)
        else:
            tool = build_tool_view(message.content, message.tool_view, own)
        html = render_to_string(
            "web/fragments/tool_message.html", {"message": message, "failed": failed, "tool": tool}
        )
        entries = source_entries(own)
        return MessageRendering(html=html, sources=dict(own), entries=entries)
    # Human and system messages are shown as written; their export keeps their links,
    # except any that would pose as one of the export's reference markers.
    plain = format_html('<div class="plain-text">{}</div>', message.content)
    return MessageRendering(
        html=plain, export=message_export_parts(parse_markdown(message.content), None), text=message.content
    )
