"""Rewriting inline Markdown links in place, leaving code untouched.

markdown-it keeps no character offsets for inline tokens, so the export finds
links itself: code blocks come from markdown-it's block map (as
``find_citations`` sees them); code spans, brackets and inline links are
scanned here. Every step is linear or bounded, because content can be large
and hostile.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.helpers import parseLinkDestination, parseLinkTitle

#: ``replace(label_source, href, original_text) -> new_text``; href is markdown-it's normalized form.
LinkReplacer = Callable[[str, str, str], str]

# A destination or title longer than this is not treated as a link, which keeps hostile input linear.
_MAX_DESTINATION = 4096
_MAX_TITLE = 4096


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False})


def rewrite_inline_links(markdown: str, replace: LinkReplacer) -> str:
    """Pass every inline link ``[label](href "title")`` outside code through ``replace``.

    Images are kept whole; reference-style links are left as written.
    """
    lines = markdown.splitlines(keepends=True)
    code_lines: set[int] = set()
    for token in _parser().parse(markdown):
        if token.type in {"fence", "code_block"} and token.map:
            code_lines.update(range(token.map[0], token.map[1]))
    pieces: list[str] = []
    segment: list[str] = []
    for index, line in enumerate(lines):
        if index in code_lines:
            pieces.append(_rewrite_segment("".join(segment), replace))
            segment = []
            pieces.append(line)
        else:
            segment.append(line)
    pieces.append(_rewrite_segment("".join(segment), replace))
    return "".join(pieces)


def _rewrite_segment(text: str, replace: LinkReplacer) -> str:
    spans = _code_spans(text)
    closing = _matching_brackets(text, spans)
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == "\\":
            out.append(text[i : i + 2])
            i += 2
        elif i in spans:
            out.append(text[i : spans[i]])
            i = spans[i]
        elif char == "!" and i + 1 < n and text[i + 1] == "[":
            link = _inline_link(text, i + 1, closing)
            end = link[0] if link else i + 2
            out.append(text[i:end])
            i = end
        elif char == "[" and (link := _inline_link(text, i, closing)) is not None:
            end, label, href = link
            out.append(replace(label, href, text[i:end]))
            i = end
        else:
            out.append(char)
            i += 1
    return "".join(out)


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


def _inline_link(text: str, start: int, closing: dict[int, int]) -> tuple[int, str, str] | None:
    """``(end, label source, normalized href)`` of the inline link whose label opens at ``start``."""
    label_end = closing.get(start)
    if label_end is None or label_end + 1 >= len(text) or text[label_end + 1] != "(":
        return None
    pos = _skip_space(text, label_end + 2)
    href = ""
    destination = parseLinkDestination(text, pos, min(len(text), pos + _MAX_DESTINATION))
    if destination.ok:
        href = _parser().normalizeLink(destination.str)
        after = _skip_space(text, destination.pos)
        if after > destination.pos:
            title = parseLinkTitle(text, after, min(len(text), after + _MAX_TITLE))
            if title.ok:
                after = _skip_space(text, title.pos)
        pos = after
    if pos >= len(text) or text[pos] != ")":
        return None
    return pos + 1, text[start + 1 : label_end], href


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\n":
        pos += 1
    return pos
