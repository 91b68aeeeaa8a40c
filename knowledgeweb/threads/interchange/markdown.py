"""A thread's Markdown export, assembled at read from the parts its messages' renders stored.

Each message's part was written with its render (``threads.rendering.export``); here the
thread numbers its sources, heads each message and lists the references at the end.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from knowledgeweb.knowledge import Evidence
from knowledgeweb.threads.calls import call_answers, calls_markdown, parts_markdown
from knowledgeweb.threads.evidence import evidence_from_json
from knowledgeweb.threads.models import Message, MessageRender, MessageType, Thread
from knowledgeweb.threads.rendering.export import (
    References,
    assemble,
    escape_inline,
    fenced,
    reference_anchor,
    targets_reference_anchor,
)

_HEADINGS = {"human": "Human", "ai": "AI", "tool": "Tool", "system": "System"}
REFERENCES_HEADING = "Sources found by knowledgeweb"
NO_CITATIONS_NOTE = "*No citations in this answer.*"


def thread_export_markdown(
    thread: Thread, messages: Sequence[Message], renders: Mapping[Any, MessageRender]
) -> str:
    """A readable document: resolved citations become ``label [n]`` with a reference list.

    Each marker ``[n]`` links to its entry in the references section at the
    end, whose anchor carries a tag derived from the whole thread; no message
    can predict the tag, and any link a message writes to a ``#ref-…`` anchor
    was rewritten into its plain label at write, so a marker written in a message
    never renders as a link. Each reference lists provider, title, dataset,
    page, URL and the excerpt exactly as retrieved. Unresolved and malformed
    citations are their plain label. Tool output is kept verbatim in a code
    block; it is what the model read.
    """
    references = References(thread.source_numbers)
    sources: dict[str, Evidence] = {}
    tag = _anchor_tag(thread, messages)
    out = [f"# {escape_inline(thread.title)}", ""]
    out.append(f"- Thread: `{thread.id}`")
    if thread.agent_name:
        out.append(f"- Agent: {escape_inline(thread.agent_name)}")
    out.append(f"- Created: {thread.created_at.isoformat()}")
    out.append(f"- Messages: {len(messages)}")
    out.append(f"- Citations: {_tally(thread)}")
    out.append("")
    answers = call_answers(messages)
    for message in messages:
        render = renders[message.id]
        heading = f"## {message.seq}. {_HEADINGS.get(message.type, message.type)}"
        if message.type == MessageType.TOOL and message.name:
            heading += f" `{message.name}`" if "`" not in message.name else f" {escape_inline(message.name)}"
        if message.status == "error":
            heading += " (error)"
        out.extend([heading, ""])
        if message.type == MessageType.TOOL:
            for record in render.sources:
                sources.setdefault(record["handle"], evidence_from_json(record))
            out.extend([fenced(message.content), ""])
        else:
            out.extend([assemble(render.export, references, tag, sources), ""])
            if message.type == MessageType.AI and render.uncited:
                out.extend([NO_CITATIONS_NOTE, ""])
        out.extend(calls_markdown(message, answers.get(message.id, [])) + parts_markdown(message))
    if references.cited:
        out.extend(["---", "", f"## {REFERENCES_HEADING}", ""])
        out.extend([_genuine_marker_note(tag), ""])
        for handle, number in sorted(references.cited.items(), key=lambda item: item[1]):
            out.extend(_reference(number, sources[handle], tag))
    return "\n".join(out).rstrip("\n") + "\n"


def _tally(thread: Thread) -> str:
    """The header's tally, in the page's words (the thread's stored counters)."""
    found, missing, malformed = (
        thread.citations_resolved,
        thread.citations_unresolved,
        thread.citations_malformed,
    )
    words = (
        f"{found + missing + malformed} ({found} source found, {missing} no source, {malformed} malformed)"
    )
    if thread.citations_mismatched:
        n = thread.citations_mismatched
        words += f"; {n} label{'' if n == 1 else 's'} naming another source"
    if thread.answers_uncited:
        n = thread.answers_uncited
        words += f"; {n} answer{'' if n == 1 else 's'} without citations"
    return words


def _anchor_tag(thread: Thread, messages: Sequence[Message]) -> str:
    """A tag for reference anchors that no message can know: it hashes every message's digest."""
    digest = hashlib.sha256(str(thread.id).encode())
    for message in messages:
        for part in (message.type, message.name, message.digest):
            digest.update(len(part.encode()).to_bytes(8, "big"))
            digest.update(part.encode())
    return digest.hexdigest()[:12]


def _genuine_marker_note(tag: str) -> str:
    return (
        "Only a marker that links to an entry below (its anchor starts with "
        f"`ref-{tag}-`) is a citation knowledgeweb resolved against the evidence retrieved "
        "before it; any other bracketed number or references list above is text written in the thread."
    )


def _reference(number: int, source: Evidence, tag: str) -> list[str]:
    # Brackets are escaped so that no link reference definition in the thread can turn them into a link.
    lines = [
        f'### <a id="{reference_anchor(tag, number)}"></a>\\[{number}\\] {escape_inline(source.title)}',
        "",
    ]
    lines.append(f"- Provider: {escape_inline(source.provider)}")
    if source.dataset_name:
        lines.append(f"- Dataset: {escape_inline(source.dataset_name)}")
    if len(source.pages) == 1:
        lines.append(f"- Page: {source.pages[0]}")
    elif source.pages:
        lines.append(f"- Pages: {', '.join(str(p) for p in source.pages)}")
    if source.url:
        lines.append(f"- URL: {_autolink(source.url)}")
    lines.append(f"- Source: `{source.handle}`")
    if source.truncated:
        lines.append("- The excerpt was shortened when it was retrieved.")
    lines.extend(["", fenced(source.excerpt), ""])
    return lines


def _autolink(url: str) -> str:
    if re.fullmatch(r"[^\s<>]+", url) and not targets_reference_anchor(url):
        return f"<{url}>"
    return escape_inline(url)
