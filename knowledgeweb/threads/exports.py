"""Exporting a thread as JSON (messages as stored) or Markdown (citations as numbered references)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import unquote

from django.core.serializers.json import DjangoJSONEncoder

from knowledgeweb.knowledge import Citation, Evidence, classify_href
from knowledgeweb.knowledge.citations import USER_CONTENT_PREFIX
from knowledgeweb.threads.calls import call_answers, calls_markdown, parts_markdown
from knowledgeweb.threads.errors import ExportFormatError
from knowledgeweb.threads.evidence import evidence_before, resolve_citation
from knowledgeweb.threads.links import Link, RenderedLink, inspect_markdown, rewrite_links
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
                "tool_calls": m.tool_calls,
                "parts": m.parts,
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
REFERENCES_HEADING = "References verified by knowledgeweb"


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

    def forget_after(self, count: int) -> None:
        """Drop the sources numbered after the first ``count`` (a message that fell back to verbatim)."""
        for source in self.sources[count:]:
            del self.numbers[source.handle]
        del self.sources[count:]


def thread_export_markdown(thread: Thread, messages: list[Message]) -> str:
    """A readable document: resolved citations become ``label [n]`` with a reference list.

    Each marker ``[n]`` links to its entry in the references section at the
    end, whose anchor carries a tag derived from the whole thread; no message
    can predict the tag, and any link a message writes to a ``#ref-…`` anchor
    is rewritten into its plain label, so a marker written in a message never
    renders as a link. Each reference lists provider, title, dataset, page, URL
    and the excerpt exactly as retrieved. Unresolved and malformed citations
    become their plain label. Tool output is kept verbatim in a code block; it
    is what the model read.
    """
    references = _References()
    tag = _anchor_tag(thread, messages)
    out = [f"# {_escape_inline(thread.title)}", ""]
    out.append(f"- Thread: `{thread.id}`")
    if thread.agent_name:
        out.append(f"- Agent: {_escape_inline(thread.agent_name)}")
    out.append(f"- Created: {thread.created_at.isoformat()}")
    out.append(f"- Messages: {len(messages)}")
    out.append("")
    answers = call_answers(messages)
    for message, available in evidence_before(messages):
        heading = f"## {message.seq}. {_HEADINGS.get(message.type, message.type)}"
        if message.type == MessageType.TOOL and message.name:
            heading += f" `{message.name}`" if "`" not in message.name else f" {_escape_inline(message.name)}"
        if message.status == "error":
            heading += " (error)"
        out.extend([heading, ""])
        if message.type == MessageType.TOOL:
            out.extend([_fenced(message.content), ""])
        else:
            cites = available if message.type == MessageType.AI else None
            out.extend([_body(message.content, cites, references, tag), ""])
        out.extend(calls_markdown(message, answers.get(message.id, [])) + parts_markdown(message))
    if references.sources:
        out.extend(["---", "", f"## {REFERENCES_HEADING}", ""])
        out.extend([_genuine_marker_note(tag), ""])
        for number, source in enumerate(references.sources, start=1):
            out.extend(_reference(number, source, tag))
    return "\n".join(out).rstrip("\n") + "\n"


def _anchor_tag(thread: Thread, messages: list[Message]) -> str:
    """A tag for reference anchors that no message can know: it hashes every message, itself included."""
    digest = hashlib.sha256(str(thread.id).encode())
    for message in messages:
        for part in (message.type, message.name, message.content):
            digest.update(len(part.encode()).to_bytes(8, "big"))
            digest.update(part.encode())
    return digest.hexdigest()[:12]


def _anchor(tag: str, number: int) -> str:
    return f"ref-{tag}-{number}"


def _genuine_marker_note(tag: str) -> str:
    return (
        "Only a marker that links to an entry below (its anchor starts with "
        f"`ref-{tag}-`) is a citation knowledgeweb resolved against the evidence retrieved "
        "before it; any other bracketed number or references list above is text written in the thread."
    )


def _reference(number: int, source: Evidence, tag: str) -> list[str]:
    # Brackets are escaped so that no link reference definition in the thread can turn them into a link.
    lines = [f'### <a id="{_anchor(tag, number)}"></a>\\[{number}\\] {_escape_inline(source.title)}', ""]
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
    if re.fullmatch(r"[^\s<>]+", url) and not targets_reference_anchor(url):
        return f"<{url}>"
    return _escape_inline(url)


# --- Rewriting message text -----------------------------------------------------------------------


def targets_reference_anchor(href: str) -> bool:
    """Whether ``href`` points at a ``#ref-…`` anchor, however it is spelled."""
    _, hash_sign, fragment = href.partition("#")
    if not hash_sign:
        return False
    fragment = unquote(fragment).strip().lower().removeprefix(USER_CONTENT_PREFIX)
    return fragment.startswith("ref-")


def _body(markdown: str, available: Mapping[str, Evidence] | None, references: _References, tag: str) -> str:
    """Message text with its citations rewritten; ``available`` is None where citations are not read.

    If the rewritten text does not render as intended (a real parser finds a
    ``#ref-`` link that is not one of the export's markers, raw HTML, a block
    left open, or nesting so deep a parser would drop part of it), the message is
    shown verbatim in a code block instead.
    """
    numbered = len(references.sources)
    markers: list[RenderedLink] = []

    def replace(link: Link) -> str:
        if targets_reference_anchor(link.href):
            return link.label
        state, handle = classify_href(link.href)
        if state == "other" or available is None:
            return link.kept()
        citation = Citation(label=link.label, href=link.href, state=state, handle=handle)
        resolved = resolve_citation(citation, available)
        if resolved.source is None:
            return link.label
        number = references.number(resolved.source)
        markers.append(RenderedLink(href=f"#{_anchor(tag, number)}", text=f"[{number}]"))
        return f"{link.label} [\\[{number}\\]](#{_anchor(tag, number)})"

    def drop_definition(href: str) -> bool:
        return targets_reference_anchor(href) or (available is not None and classify_href(href)[0] != "other")

    text = rewrite_links(
        markdown,
        replace,
        drop_definition=drop_definition,
        autolink_allowed=lambda href: not targets_reference_anchor(href),
    )
    inspection = inspect_markdown(text)
    if inspection.open_fence is not None:
        # A reply cut off inside a code block: close the block so it ends with the message.
        text = text.rstrip("\n") + "\n" + inspection.open_fence
        inspection = inspect_markdown(text)
    anchored = [link for link in inspection.links if targets_reference_anchor(link.href)]
    if inspection.closed and not inspection.raw_html and not inspection.too_deep and anchored == markers:
        return text.rstrip("\n")
    references.forget_after(numbered)
    return "*Shown verbatim: this message's Markdown could not be rendered safely.*\n\n" + _fenced(markdown)
