"""Exporting a thread as JSON (messages as stored) or Markdown (citations as numbered references).

Pure: the export is computed from the messages and their stored renders, which
the caller reads (``threads.selectors.thread_export``). The Markdown of each
message (``MessageRender.export``) is regenerated here at write, from the link
grammar's token stream, with a slot where each resolved citation's number goes;
numbering sources across the thread is all that is left for the read, so an
export never parses Markdown.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import unquote

from django.core.serializers.json import DjangoJSONEncoder
from mdformat.plugins import PARSER_EXTENSIONS
from mdformat.renderer import DEFAULT_RENDERERS, MDRenderer, RenderContext, RenderTreeNode

from knowledgeweb.knowledge import Evidence
from knowledgeweb.knowledge.citations import USER_CONTENT_PREFIX
from knowledgeweb.knowledge.linkgrammar import Link, ParsedMarkdown, markdown_parser, parse_markdown
from knowledgeweb.knowledge.numbering import number_sources
from knowledgeweb.threads.calls import call_answers, calls_markdown, parts_markdown
from knowledgeweb.threads.errors import ExportFormatError
from knowledgeweb.threads.evidence import ResolvedCitation, evidence_from_json
from knowledgeweb.threads.models import Message, MessageRender, MessageType, Thread

ExportFormat = Literal["json", "markdown"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("json", "markdown")
#: Marks the JSON export; the document is also a valid import body.
JSON_EXPORT_FORMAT = "knowledgeweb.thread.v1"


@dataclass(frozen=True, slots=True)
class ThreadExport:
    content: str
    content_type: str
    filename: str


def export_format_check(format: str) -> ExportFormat:
    """``format`` if it is one the export knows; otherwise ``ExportFormatError``."""
    for known in EXPORT_FORMATS:
        if format == known:
            return known
    raise ExportFormatError(f"unknown export format {format!r}; expected json or markdown.")


def export_document(
    *,
    thread: Thread,
    format: ExportFormat,
    messages: list[Message],
    renders: Mapping[Any, MessageRender],
) -> ThreadExport:
    """``thread`` as ``json`` (``renders`` unused), or as ``markdown`` from its messages' ``renders``."""
    stem = f"thread-{thread.id}"
    if format == "json":
        return ThreadExport(
            content=thread_export_json(thread, messages),
            content_type="application/json",
            filename=f"{stem}.json",
        )
    return ThreadExport(
        content=thread_export_markdown(thread, messages, renders),
        content_type="text/markdown; charset=utf-8",
        filename=f"{stem}.md",
    )


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


# --- Markdown: written per message at write -------------------------------------------------------

#: A stored export part: Markdown text, or a resolved citation waiting for its number.
ExportPart = str | dict[str, str]

VERBATIM_NOTE = "*Shown verbatim: this message's Markdown could not be rendered safely.*"


def targets_reference_anchor(href: str) -> bool:
    """Whether ``href`` points at a ``#ref-…`` anchor, however it is spelled."""
    _, hash_sign, fragment = href.partition("#")
    if not hash_sign:
        return False
    fragment = unquote(fragment).strip().lower().removeprefix(USER_CONTENT_PREFIX)
    return fragment.startswith("ref-")


class _Regenerate:
    """mdformat's renderers, except for links: the grammar's verdict decides each one.

    mdformat walks links in document order, the order the grammar lists them, so
    the n-th link rendered is the grammar's n-th link (checked, never assumed).
    """

    def __init__(
        self,
        links: Sequence[Link],
        verdicts: Sequence[ResolvedCitation] | None,
        slot: str,
        mismatched: Sequence[bool] = (),
    ) -> None:
        self.links: Iterator[Link] = iter(links)
        self.verdicts: Iterator[ResolvedCitation] | None = None if verdicts is None else iter(verdicts)
        self.mismatched: Iterator[bool] = iter(mismatched)
        self.slot = slot
        self.handles: list[dict[str, str]] = []
        self.RENDERERS = {"link": self.link, "fence": _closed_fence, "code_block": _closed_fence}

    def link(self, node: RenderTreeNode, context: RenderContext) -> str:
        link = next(self.links, None)
        if link is None or str(node.attrs.get("href", "")) != link.href:
            raise _MismatchError
        label = _inert("".join(child.render(context) for child in node.children))
        if targets_reference_anchor(link.href):
            return label  # only the export's own markers may lead to a reference
        if self.verdicts is None or not link.is_citation:
            return DEFAULT_RENDERERS["link"](node, context)
        verdict = next(self.verdicts, None)
        if verdict is None:
            raise _MismatchError
        mismatch = next(self.mismatched, False)
        label = _without_prefix(label)
        if verdict.source is None:
            # A citation whose source was not found keeps a visible marker with its label.
            return f"\\[{_MARKER_WORDS.get(verdict.state, 'no source')}: {label or '(no label)'}\\]"
        part = {"handle": verdict.source.handle, **({"mismatch": "1"} if mismatch else {})}
        self.handles.append(part)
        return f"{label}{self.slot}{len(self.handles) - 1}{self.slot}"


#: The export's words for a citation whose source was not found (docs/decisions/0036-the-reader-honest-words-one-numbering.md).
_MARKER_WORDS = {"unresolved": "no source", "malformed": "malformed"}
_PREFIX = re.compile(r"\A\s*citation\s*(?:\\)?:\s*", re.IGNORECASE)


def _without_prefix(label: str) -> str:
    """A rendered label less a leading ``citation:`` (the whole label when nothing else is left)."""
    rest = _PREFIX.sub("", label, count=1)
    return rest if rest.strip() else label


#: mdformat-gfm's renderers for tables and ``~~``, and its escapes that keep text from turning into
#: either (a table read as text, because of ``MAX_TABLE_CELLS``, stays text in the export too).
_GFM = (PARSER_EXTENSIONS["tables"], PARSER_EXTENSIONS["gfm"])


class _MismatchError(Exception):
    pass


def _inert(label: str) -> str:
    """A label written in place of its link, escaped so that no bare URL in it becomes a link again.

    The grammar links bare URLs (``https://…``, ``mailto:…``, e-mail addresses), so the label of
    an autolink or a linkified URL would otherwise be a link once more when the text is read.
    Only a label the linkifier finds something in is touched; ``\\:`` and ``\\@`` read as the
    characters they escape.
    """
    linkify = markdown_parser().linkify
    if linkify is None or not linkify.test(label):
        return label
    return label.replace(":", "\\:").replace("@", "\\@")


class _Node(RenderTreeNode):
    """mdformat's tree node with siblings found in constant time.

    The library finds a node's neighbour with ``siblings.index(self)``, a scan, and asks
    for it at every text node: quadratic in a paragraph's length, which a hostile
    message turns into tens of seconds. An index per parent, built once, makes it linear.
    """

    def _sibling(self, step: int) -> _Node | None:
        parent = self.parent
        if parent is None:
            return None
        positions: dict[int, int] | None = getattr(parent, "_positions", None)
        if positions is None:
            positions = {id(child): n for n, child in enumerate(parent.children)}
            setattr(parent, "_positions", positions)  # noqa: B010  (a cache on the library's node)
        target = positions[id(self)] + step
        children = parent.children
        return children[target] if 0 <= target < len(children) else None

    @property
    def next_sibling(self) -> _Node | None:
        return self._sibling(1)

    @property
    def previous_sibling(self) -> _Node | None:
        return self._sibling(-1)


def _closed_fence(node: RenderTreeNode, context: RenderContext) -> str:
    """mdformat's fence, closed on a line of its own even when the message was cut off inside it."""
    out = str(DEFAULT_RENDERERS["fence"](node, context))
    if node.content and not node.content.endswith("\n"):
        fence = out[: len(out) - len(out.lstrip(out[0]))]
        out = out[: -len(fence)] + "\n" + fence
    return out


def message_export_parts(
    parsed: ParsedMarkdown, verdicts: Sequence[ResolvedCitation] | None, mismatched: Sequence[bool] = ()
) -> list[ExportPart]:
    """A message's export, computed at write from its parse.

    ``verdicts`` are the message's citation verdicts (AI messages), or None where
    citations are not read (human and system messages keep their links as written).
    Resolved citations become ``{"handle": ...}`` parts that the read numbers; any
    link to a ``#ref-…`` anchor becomes its plain label. If the regenerated text
    would not read as intended (a marker where none belongs, nesting a parser would
    cut), the message is exported verbatim in a code block instead.
    """
    if parsed.as_written:
        return [_verbatim(parsed.text)]
    slot = _slot(parsed.text)
    regenerate = _Regenerate(parsed.links, verdicts, slot, mismatched)
    options = {**markdown_parser().options, "parser_extension": [*_GFM, regenerate], "mdformat": {}}
    try:
        text = MDRenderer().render_tree(_Node(parsed.tokens), options, dict(parsed.env)).rstrip("\n")
    except _MismatchError:
        return _verbatim_with_citations(parsed.text, verdicts)
    if next(regenerate.links, None) is not None:
        return _verbatim_with_citations(parsed.text, verdicts)
    pieces = text.split(slot)
    parts: list[ExportPart] = []
    for index, piece in enumerate(pieces):
        if index % 2 == 0:
            if piece:
                parts.append(piece)
        else:
            parts.append(regenerate.handles[int(piece)])
    if not _reads_as_intended(parts, len(regenerate.handles)):
        return _verbatim_with_citations(parsed.text, verdicts)
    return parts


def _verbatim_with_citations(markdown: str, verdicts: Sequence[ResolvedCitation] | None) -> list[ExportPart]:
    """The message verbatim, then its resolved citations with their numbers, in order.

    For text the regeneration cannot reproduce faithfully (mdformat and markdown-it
    disagree on some runs of adjacent code spans): the reader still gets every number
    the report and the page give, under the text exactly as written.
    """
    parts: list[ExportPart] = [_verbatim(markdown)]
    resolved = [(v.label, v.source.handle) for v in verdicts or () if v.source is not None]
    if resolved:
        parts.append("\n\n*Citations in this message whose source knowledgeweb found:* ")
        for index, (label, handle) in enumerate(resolved):
            if index:
                parts.append(", ")
            parts.append(_escape_inline(label) or "(no label)")
            parts.append({"handle": handle})
        parts.append(".")
    return parts


def _slot(text: str) -> str:
    """A marker that cannot occur in ``text`` (random, and checked)."""
    while True:
        slot = f"\ue000{secrets.token_hex(8)}\ue001"
        if slot not in text:
            return slot


def _verbatim(markdown: str) -> str:
    return f"{VERBATIM_NOTE}\n\n{_fenced(markdown)}"


def _reads_as_intended(parts: Sequence[ExportPart], markers: int) -> bool:
    """Parse the text as the read will assemble it: exactly the markers lead to a reference."""
    probe_tag = "0" * 12
    numbers = _References()
    end = f"end-{secrets.token_hex(8)}"
    text = _assemble(parts, numbers, probe_tag, {})
    # Uncapped: the markers add brackets and tokens to a message that passed the caps.
    found = parse_markdown(f"{text}\n\n{end}\n", capped=False)
    if found.as_written:
        return False
    # Nothing the message opens may run on into what follows it in the export.
    tail = found.tokens[-3:]
    if [t.type for t in tail] != ["paragraph_open", "inline", "paragraph_close"] or tail[1].content != end:
        return False
    if tail[0].level != 0:
        return False
    anchored = [link.href for link in found.links if targets_reference_anchor(link.href)]
    return anchored == [f"#{_anchor(probe_tag, n)}" for n in numbers.order] and len(numbers.order) == markers


class _References:
    """The numbers of the sources cited, in order: the thread's (``Thread.source_numbers``), and
    any source they lack takes the next number (``knowledge.numbering``)."""

    def __init__(self, numbers: Mapping[str, int] | None = None) -> None:
        self.numbers: dict[str, int] = dict(numbers or {})
        self.order: list[int] = []
        self.cited: dict[str, int] = {}

    def number(self, handle: str) -> int:
        self.numbers = number_sources([handle], self.numbers)
        number = self.numbers[handle]
        self.cited.setdefault(handle, number)
        self.order.append(number)
        return number


def _assemble(
    parts: Sequence[Any], references: _References, tag: str, available: Mapping[str, Evidence]
) -> str:
    out: list[str] = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict) and isinstance(part.get("handle"), str):
            number = references.number(part["handle"])
            out.append(f" [\\[{number}\\]](#{_anchor(tag, number)})")
            if part.get("mismatch"):
                out.append(" \\[label names another source\\]")
    return "".join(out)


# --- Markdown: assembled at read -------------------------------------------------------------------

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
    references = _References(thread.source_numbers)
    sources: dict[str, Evidence] = {}
    tag = _anchor_tag(thread, messages)
    out = [f"# {_escape_inline(thread.title)}", ""]
    out.append(f"- Thread: `{thread.id}`")
    if thread.agent_name:
        out.append(f"- Agent: {_escape_inline(thread.agent_name)}")
    out.append(f"- Created: {thread.created_at.isoformat()}")
    out.append(f"- Messages: {len(messages)}")
    out.append(f"- Citations: {_tally(thread)}")
    out.append("")
    answers = call_answers(messages)
    for message in messages:
        render = renders[message.id]
        heading = f"## {message.seq}. {_HEADINGS.get(message.type, message.type)}"
        if message.type == MessageType.TOOL and message.name:
            heading += f" `{message.name}`" if "`" not in message.name else f" {_escape_inline(message.name)}"
        if message.status == "error":
            heading += " (error)"
        out.extend([heading, ""])
        if message.type == MessageType.TOOL:
            for record in render.sources:
                sources.setdefault(record["handle"], evidence_from_json(record))
            out.extend([_fenced(message.content), ""])
        else:
            out.extend([_assemble(render.export, references, tag, sources), ""])
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
