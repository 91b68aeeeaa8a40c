"""A message's part of the Markdown export, written at write with its render.

The Markdown of each message (``MessageRender.export``) is regenerated here, from the link
grammar's token stream, with a slot where each resolved citation's number goes; numbering
sources across the thread is all that is left for the read (``threads.interchange.markdown``),
so an export never parses Markdown. Pure: it reads nothing from the database.

The pieces the read shares with the check made here (the reference numbers, the assembly of
parts, the anchors, the inert text and the code block) are public for it.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import unquote

from mdformat.plugins import PARSER_EXTENSIONS
from mdformat.renderer import DEFAULT_RENDERERS, MDRenderer, RenderContext, RenderTreeNode

from knowledgeweb.knowledge import Evidence
from knowledgeweb.knowledge.citations import USER_CONTENT_PREFIX
from knowledgeweb.knowledge.linkgrammar import Link, ParsedMarkdown, markdown_parser, parse_markdown
from knowledgeweb.knowledge.numbering import number_sources
from knowledgeweb.threads.evidence import ResolvedCitation

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
            parts.append(escape_inline(label) or "(no label)")
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
    return f"{VERBATIM_NOTE}\n\n{fenced(markdown)}"


def _reads_as_intended(parts: Sequence[ExportPart], markers: int) -> bool:
    """Parse the text as the read will assemble it: exactly the markers lead to a reference."""
    probe_tag = "0" * 12
    numbers = References()
    end = f"end-{secrets.token_hex(8)}"
    text = assemble(parts, numbers, probe_tag, {})
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
    return (
        anchored == [f"#{reference_anchor(probe_tag, n)}" for n in numbers.order]
        and len(numbers.order) == markers
    )


class References:
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


def assemble(
    parts: Sequence[Any], references: References, tag: str, available: Mapping[str, Evidence]
) -> str:
    out: list[str] = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict) and isinstance(part.get("handle"), str):
            number = references.number(part["handle"])
            out.append(f" [\\[{number}\\]](#{reference_anchor(tag, number)})")
            if part.get("mismatch"):
                out.append(" \\[label names another source\\]")
    return "".join(out)


def reference_anchor(tag: str, number: int) -> str:
    return f"ref-{tag}-{number}"


def fenced(text: str) -> str:
    """A code block that shows ``text`` exactly, whatever backticks it holds."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") else text + "\n"
    return f"{fence}text\n{body}{fence}"


_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")


def escape_inline(text: str) -> str:
    """Provider text as inert Markdown on one line."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", " ".join(text.split()))
