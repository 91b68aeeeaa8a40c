"""Exporting a thread as JSON (messages as stored) or Markdown (citations as numbered references)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from django.core.serializers.json import DjangoJSONEncoder

from knowledgeweb.knowledge import Citation, Evidence, classify_href
from knowledgeweb.threads.errors import ExportFormatError
from knowledgeweb.threads.evidence import evidence_before, resolve_citation
from knowledgeweb.threads.links import rewrite_inline_links
from knowledgeweb.threads.models import Message, MessageType, Thread
from knowledgeweb.threads.selectors import thread_messages

ExportFormat = Literal["json", "markdown"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("json", "markdown")
#: Marks the JSON export; the document is also a valid import body.
JSON_EXPORT_FORMAT = "knowledgeweb.thread.v1"


@dataclass(frozen=True, slots=True)
class ThreadExport:
    content: str
    content_type: str
    filename: str


def thread_export(*, thread: Thread, format: str) -> ThreadExport:
    """Export ``thread`` as ``json`` or ``markdown``."""
    messages = thread_messages(thread=thread)
    stem = f"thread-{thread.id}"
    if format == "json":
        return ThreadExport(
            content=thread_export_json(thread, messages),
            content_type="application/json",
            filename=f"{stem}.json",
        )
    if format == "markdown":
        return ThreadExport(
            content=thread_export_markdown(thread, messages),
            content_type="text/markdown; charset=utf-8",
            filename=f"{stem}.md",
        )
    raise ExportFormatError(f"unknown export format {format!r}; expected json or markdown.")


# --- JSON -----------------------------------------------------------------------------------------


def thread_export_json(thread: Thread, messages: list[Message]) -> str:
    """The thread with its messages exactly as stored.

    The document is also an import body (``title``, ``agent_name``, ``messages``).
    """
    document: dict[str, Any] = {
        "format": JSON_EXPORT_FORMAT,
        "id": thread.id,
        "title": thread.title,
        "agent_name": thread.agent_name,
        "created_at": thread.created_at,
        "updated_at": thread.updated_at,
        "messages": [
            {
                "id": m.id,
                "seq": m.seq,
                "type": m.type,
                "name": m.name,
                "tool_call_id": m.tool_call_id,
                "content": m.content,
                "artifact": m.artifact,
                "status": m.status,
                "digest": m.digest,
                "created_at": m.created_at,
            }
            for m in messages
        ],
    }
    return json.dumps(document, cls=DjangoJSONEncoder, ensure_ascii=False, indent=2) + "\n"


# --- Markdown -------------------------------------------------------------------------------------

_HEADINGS = {"human": "Human", "ai": "AI", "tool": "Tool", "system": "System"}


class _References:
    """Numbers resolved sources in order of first citation."""

    def __init__(self) -> None:
        self.numbers: dict[str, int] = {}
        self.sources: list[Evidence] = []

    def number(self, source: Evidence) -> int:
        if source.handle not in self.numbers:
            self.sources.append(source)
            self.numbers[source.handle] = len(self.sources)
        return self.numbers[source.handle]


def thread_export_markdown(thread: Thread, messages: list[Message]) -> str:
    """A readable document: resolved citations become ``label [n]`` with a reference list.

    Each reference lists provider, title, dataset, page, URL and the excerpt exactly
    as retrieved. Unresolved and malformed citations become their plain label.
    Tool output is kept verbatim in a code block; it is what the model read.
    """
    references = _References()
    out = [f"# {_escape_inline(thread.title)}", ""]
    out.append(f"- Thread: `{thread.id}`")
    if thread.agent_name:
        out.append(f"- Agent: {_escape_inline(thread.agent_name)}")
    out.append(f"- Created: {thread.created_at.isoformat()}")
    out.append(f"- Messages: {len(messages)}")
    out.append("")
    for message, available in evidence_before(messages):
        heading = f"## {message.seq}. {_HEADINGS.get(message.type, message.type)}"
        if message.type == MessageType.TOOL and message.name:
            heading += f" `{message.name}`" if "`" not in message.name else f" {_escape_inline(message.name)}"
        if message.status == "error":
            heading += " (error)"
        out.extend([heading, ""])
        if message.type == MessageType.TOOL:
            out.extend([_fenced(message.content), ""])
        elif message.type == MessageType.AI:
            out.extend([_rewrite_citations(message.content, available, references), ""])
        else:
            out.extend([message.content, ""])
    if references.sources:
        out.extend(["## References", ""])
        for number, source in enumerate(references.sources, start=1):
            out.extend(_reference(number, source))
    return "\n".join(out).rstrip("\n") + "\n"


def _reference(number: int, source: Evidence) -> list[str]:
    lines = [f"### [{number}] {_escape_inline(source.title)}", ""]
    lines.append(f"- Provider: {_escape_inline(source.provider)}")
    if source.dataset_name:
        lines.append(f"- Dataset: {_escape_inline(source.dataset_name)}")
    if len(source.pages) == 1:
        lines.append(f"- Page: {source.pages[0]}")
    elif source.pages:
        lines.append(f"- Pages: {', '.join(str(p) for p in source.pages)}")
    if source.url:
        lines.append(f"- URL: {_autolink(source.url)}")
    lines.append(f"- Source: `{source.handle}`")
    if source.truncated:
        lines.append("- The excerpt was shortened when it was retrieved.")
    lines.extend(["", _fenced(source.excerpt), ""])
    return lines


def _fenced(text: str) -> str:
    """A code block that shows ``text`` exactly, whatever backticks it holds."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") else text + "\n"
    return f"{fence}text\n{body}{fence}"


_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")


def _escape_inline(text: str) -> str:
    """Provider text as inert Markdown on one line."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", " ".join(text.split()))


def _autolink(url: str) -> str:
    if re.fullmatch(r"[^\s<>]+", url):
        return f"<{url}>"
    return _escape_inline(url)


# --- Rewriting citation links ---------------------------------------------------------------------


def _rewrite_citations(markdown: str, available: Mapping[str, Evidence], references: _References) -> str:
    """Each citation link becomes ``label [n]`` when resolved, its plain label otherwise."""

    def replace(label: str, href: str, original: str) -> str:
        state, handle = classify_href(href)
        if state == "other":
            return original
        citation = Citation(label=label, href=href, state=state, handle=handle)
        resolved = resolve_citation(citation, available)
        if resolved.source is not None:
            return f"{label} [{references.number(resolved.source)}]"
        return label

    return rewrite_inline_links(markdown, replace)
