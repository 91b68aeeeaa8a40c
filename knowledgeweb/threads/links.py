"""Rewriting Markdown links in place for the export, leaving code untouched.

markdown-it keeps no character offsets for inline tokens, so the export finds
links itself: code blocks and link reference definitions come from
markdown-it's block parse (as ``find_citations`` sees them); code spans,
brackets, inline and reference-style links are scanned here. Every step is
linear or bounded, because content can be large and hostile.

The scan also makes text that renderers would turn into markup of their own
inert: raw HTML tags and footnote markers (``[^1]``) are backslash-escaped, so
they show as the characters written. ``inspect_markdown`` then checks the
result with markdown-it itself, so a place where this scanner and a real
parser disagree is caught rather than trusted.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import normalizeReference
from markdown_it.helpers import parseLinkDestination, parseLinkTitle
from markdown_it.token import Token

from knowledgeweb.knowledge import nesting_exceeded
from knowledgeweb.knowledge.citations import MAX_NESTING


@dataclass(frozen=True, slots=True)
class Link:
    """One link found in Markdown.

    ``label`` is the label's source with nested text already rewritten;
    ``href`` is markdown-it's normalized destination; ``tail`` is what follows
    the label (``(dest "title")``, ``[ref]``, ``[]`` or nothing for a shortcut);
    ``reference`` is the normalized reference label for reference-style links.
    """

    label: str
    href: str
    tail: str
    reference: str | None

    def kept(self) -> str:
        """The link as written (with its label rewritten)."""
        return f"[{self.label}]{self.tail}"


#: ``replace(link) -> new_text``.
LinkReplacer = Callable[[Link], str]

# A destination or title longer than this is not treated as a link, which keeps hostile input linear.
_MAX_DESTINATION = 4096
_MAX_TITLE = 4096
# Links nested deeper than this are left as text; ``inspect_markdown`` catches what that misses.
_MAX_DEPTH = 8
# CommonMark autolinks: a URI or an e-mail address in angle brackets.
_AUTOLINK = re.compile(
    r"<(?:[A-Za-z][A-Za-z0-9.+-]{1,31}:[^\x00-\x20<>]*"
    r"|[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*)>"
)
# What may open a raw HTML tag, comment, declaration or processing instruction.
_HTML_START = re.compile(r"<[A-Za-z/!?]")


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "maxNesting": MAX_NESTING})


@lru_cache(maxsize=1)
def _renderer_parser() -> MarkdownIt:
    # As a Markdown renderer reading the export would: raw HTML on.
    return MarkdownIt("commonmark", {"html": True, "maxNesting": MAX_NESTING})


def rewrite_links(
    markdown: str,
    replace: LinkReplacer,
    *,
    drop_definition: Callable[[str], bool] = lambda href: False,
    autolink_allowed: Callable[[str], bool] = lambda href: True,
) -> str:
    """Pass every link outside code through ``replace``; make raw HTML and footnotes inert.

    Inline links and reference-style links (full ``[x][ref]``, collapsed
    ``[x][]`` and shortcut ``[x]``, resolved through the definitions in
    ``markdown``) are both passed on. Images are kept whole. A link reference
    definition whose href ``drop_definition`` accepts is removed with its lines;
    other definitions are kept as written. An autolink ``autolink_allowed``
    refuses is escaped into text.
    """
    env: dict[str, Any] = {}
    tokens = _parser().parse(markdown, env)
    references: dict[str, Any] = env.get("references", {})
    lines = markdown.splitlines(keepends=True)
    verbatim: set[int] = set()
    dropped: set[int] = set()
    for token in tokens:
        if token.type in {"fence", "code_block"} and token.map:
            verbatim.update(range(token.map[0], token.map[1]))
    definitions = list(references.items())
    definitions += [(entry["label"], entry) for entry in env.get("duplicate_refs", [])]
    for label, entry in definitions:
        start, end = entry["map"]
        if drop_definition(entry["href"]):
            dropped.update(range(start, end))
        elif not label.startswith("^"):
            # A footnote-looking definition is scanned as text, so its marker is escaped.
            verbatim.update(range(start, end))
    scanner = _Scanner(references, replace, autolink_allowed)
    pieces: list[str] = []
    segment: list[str] = []
    for index, line in enumerate(lines):
        if index in dropped or index in verbatim:
            pieces.append(scanner.rewrite("".join(segment)))
            segment = []
            if index not in dropped:
                pieces.append(line)
        else:
            segment.append(line)
    pieces.append(scanner.rewrite("".join(segment)))
    return "".join(pieces)


@dataclass
class _Segment:
    text: str
    spans: dict[int, int]
    closing: dict[int, int]


@dataclass
class _Scanner:
    references: dict[str, Any]
    replace: LinkReplacer
    autolink_allowed: Callable[[str], bool]
    segment: _Segment = field(default_factory=lambda: _Segment("", {}, {}))

    def rewrite(self, text: str) -> str:
        if not text:
            return ""
        spans = _code_spans(text)
        self.segment = _Segment(text, spans, _matching_brackets(text, spans))
        return self.scan(0, len(text), 0)[0]

    def scan(self, start: int, end: int, depth: int) -> tuple[str, bool]:
        """Rewrite ``text[start:end]``; also say whether a link was found in it."""
        text, spans = self.segment.text, self.segment.spans
        out: list[str] = []
        found = False
        i = start
        while i < end:
            char = text[i]
            if char == "\\":
                out.append(text[i : min(i + 2, end)])
                i += 2
            elif i in spans:
                stop = min(spans[i], end)
                out.append(text[i:stop])
                i = stop
            elif char == "<":
                autolink = _AUTOLINK.match(text, i, end)
                if autolink and self.autolink_allowed(autolink.group()[1:-1]):
                    out.append(autolink.group())
                    i = autolink.end()
                    found = True
                else:
                    out.append("\\<" if autolink or _HTML_START.match(text, i, end) else "<")
                    i += 1
            elif char == "[" and text.startswith("[^", i):
                out.append("\\[")
                i += 1
            elif char == "!" and text.startswith("[", i + 1) and depth < _MAX_DEPTH:
                image = self.link_at(i + 1, end)
                stop = image[0] if image else i + 2
                out.append(text[i:stop])
                i = stop
            elif char == "[" and depth < _MAX_DEPTH and (link := self.link_at(i, end)) is not None:
                stop, label_end, href, reference = link
                label, nested = self.scan(i + 1, label_end, depth + 1)
                if nested:
                    # CommonMark: a link's text holds no link, so the outer brackets are text.
                    out.append(f"[{label}]")
                    i = label_end + 1
                    found = True
                    continue
                tail = text[label_end + 1 : stop]
                out.append(self.replace(Link(label=label, href=href, tail=tail, reference=reference)))
                i = stop
                found = True
            else:
                out.append(char)
                i += 1
        return "".join(out), found

    def link_at(self, start: int, end: int) -> tuple[int, int, str, str | None] | None:
        """``(end, label end, href, reference)`` of the link whose label opens at ``start``."""
        text, closing = self.segment.text, self.segment.closing
        label_end = closing.get(start)
        if label_end is None or label_end >= end:
            return None
        inline = _inline_destination(text, label_end + 1, end)
        if inline is not None:
            return inline[0], label_end, inline[1], None
        stop = label_end + 1
        reference = text[start + 1 : label_end]
        second = closing.get(stop) if text.startswith("[", stop) else None
        if second is not None and second < end:
            if second > stop + 1:
                reference = text[stop + 1 : second]
            stop = second + 1
        key = normalizeReference(reference)
        entry = self.references.get(key) if key else None
        if entry is None:
            return None
        return stop, label_end, str(entry["href"]), key


def _inline_destination(text: str, start: int, end: int) -> tuple[int, str] | None:
    """``(end, normalized href)`` of an inline destination ``(href "title")`` at ``start``."""
    if start >= end or text[start] != "(":
        return None
    pos = _skip_space(text, start + 1, end)
    href = ""
    destination = parseLinkDestination(text, pos, min(end, pos + _MAX_DESTINATION))
    if destination.ok:
        href = _parser().normalizeLink(destination.str)
        after = _skip_space(text, destination.pos, end)
        if after > destination.pos:
            title = parseLinkTitle(text, after, min(end, after + _MAX_TITLE))
            if title.ok:
                after = _skip_space(text, title.pos, end)
        pos = after
    if pos >= end or text[pos] != ")":
        return None
    return pos + 1, href


def _code_spans(text: str) -> dict[int, int]:
    """Start -> end of each code span, found left to right as CommonMark does."""
    runs: dict[int, list[int]] = {}
    i, n = 0, len(text)
    while i < n:
        if text[i] == "`":
            start = i
            while i < n and text[i] == "`":
                i += 1
            runs.setdefault(i - start, []).append(start)
        else:
            i += 1
    spans: dict[int, int] = {}
    i = 0
    while i < n:
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char != "`":
            i += 1
            continue
        length = 0
        while i + length < n and text[i + length] == "`":
            length += 1
        starts = runs.get(length, [])
        later = bisect_right(starts, i)
        if later < len(starts):
            spans[i] = starts[later] + length
            i = starts[later] + length
        else:
            i += length
    return spans


def _matching_brackets(text: str, spans: dict[int, int]) -> dict[int, int]:
    """Index of each ``[`` -> index of its ``]``, skipping escapes and code spans."""
    closing: dict[int, int] = {}
    stack: list[int] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if i in spans:
            i = spans[i]
            continue
        if char == "[":
            stack.append(i)
        elif char == "]" and stack:
            closing[stack.pop()] = i
        i += 1
    return closing


def _skip_space(text: str, pos: int, end: int) -> int:
    while pos < end and text[pos] in " \t\n":
        pos += 1
    return pos


# --- Checking the result with a real parser -------------------------------------------------------

_SENTINEL = "knowledgeweb-end-of-message"


@dataclass(frozen=True, slots=True)
class RenderedLink:
    href: str
    text: str


@dataclass(frozen=True, slots=True)
class Inspection:
    """What a Markdown renderer makes of a piece of text, as markdown-it reads it.

    ``closed`` says the text leaves no block open (what follows it is read on
    its own); ``open_fence`` is the fence markup of a code block left open at
    the end, if that is what is open.
    """

    links: tuple[RenderedLink, ...]
    raw_html: bool
    closed: bool
    open_fence: str | None
    # Nested past the parser's limit: part of the text would silently vanish.
    too_deep: bool = False


def inspect_markdown(markdown: str) -> Inspection:
    """Parse ``markdown`` as a renderer would (raw HTML on) and report its links and open blocks."""
    source = markdown if markdown.endswith("\n") or not markdown else markdown + "\n"
    tokens = _renderer_parser().parse(f"{source}\n{_SENTINEL}\n")
    links: list[RenderedLink] = []
    raw_html = False
    for token in tokens:
        raw_html = raw_html or token.type == "html_block"
        if token.type == "inline" and token.children:
            found, html = _inline_links(token.children)
            links.extend(found)
            raw_html = raw_html or html
    tail = [(t.type, t.level, t.content) for t in tokens[-3:]]
    closed = tail == [("paragraph_open", 0, ""), ("inline", 1, _SENTINEL), ("paragraph_close", 0, "")]
    last = tokens[-1] if tokens else None
    open_fence = last.markup if last is not None and last.type == "fence" and last.level == 0 else None
    return Inspection(
        links=tuple(links),
        raw_html=raw_html,
        closed=closed,
        open_fence=open_fence,
        too_deep=nesting_exceeded(tokens),
    )


def _inline_links(children: list[Token]) -> tuple[list[RenderedLink], bool]:
    found: list[RenderedLink] = []
    open_links: list[tuple[str, list[str]]] = []
    raw_html = False
    for child in children:
        if child.type == "html_inline":
            raw_html = True
        elif child.type == "link_open":
            open_links.append((str(child.attrGet("href") or ""), []))
        elif child.type == "link_close" and open_links:
            href, parts = open_links.pop()
            found.append(RenderedLink(href=href, text="".join(parts)))
        elif open_links and child.type in {"text", "code_inline"}:
            open_links[-1][1].append(child.content)
    return found, raw_html
