"""Finding and classifying citation links in Markdown (SPEC §3.3).

Accepted hrefs, exactly:

- ``#knowledge-source-<32hex>`` and ``#user-content-knowledge-source-<32hex>``
- ``#knowledge-<32hex>-<N>`` and ``#user-content-knowledge-<32hex>-<N>``

Any other href whose fragment *looks like* a knowledge citation is
*malformed*: its fragment, less an optional ``user-content-`` prefix, starts
with ``knowledge-source`` or with ``knowledge-`` and six hex digits, in any case,
percent-encoded or not, and whatever precedes the ``#``. That catches uppercase hex, a wrong length and
an absolute URL carrying such a fragment, while an ordinary heading link such
as ``#knowledge-graphs`` stays an ordinary link.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.token import Token

HrefState = Literal["candidate", "malformed", "other"]
CitationState = Literal["candidate", "malformed"]

USER_CONTENT_PREFIX = "user-content-"

_ACCEPTED = re.compile(
    r"#(?:user-content-)?(knowledge-source-[a-f0-9]{32}|knowledge-[a-f0-9]{32}-[1-9][0-9]{0,2})"
)
_LOOKS_LIKE = re.compile(r"(?:user-content-)*knowledge-(?:source|[0-9a-f]{6})", re.IGNORECASE)
# Characters that may continue a handle; a handle found in text must not be followed by one.
_HANDLE_END = r"(?![A-Za-z0-9_-])"


@dataclass(frozen=True, slots=True)
class Citation:
    """A citation link written in Markdown.

    ``handle`` is the normalised fragment (no ``#``, no ``user-content-``) for
    candidates and ``None`` for malformed links.
    """

    label: str
    href: str
    state: CitationState
    handle: str | None


def classify_href(href: str) -> tuple[HrefState, str | None]:
    """Classify an href as a citation ``candidate``, ``malformed`` citation, or ``other`` link."""
    match = _ACCEPTED.fullmatch(href)
    if match:
        return "candidate", match.group(1)
    _, hash_sign, fragment = href.partition("#")
    if not hash_sign:
        return "other", None
    # Judge the fragment as a browser may: percent-decoded (``#knowledge%2Dsource-...``
    # still scrolls to the panel entry) and with compatibility characters folded.
    if _LOOKS_LIKE.match(unicodedata.normalize("NFKC", unquote(fragment)).strip()):
        return "malformed", None
    return "other", None


def contains_handle(text: str, handle: str) -> bool:
    """Whether ``#<handle>`` occurs in ``text`` as a whole handle (``-1`` does not match ``-10``)."""
    return re.search("#" + re.escape(handle) + _HANDLE_END, text) is not None


#: markdown-it stops descending at this depth and silently drops what lies deeper.
MAX_NESTING = 20


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # Raw HTML is not parsed: the viewer shows it as text, and citations are Markdown links only.
    return MarkdownIt("commonmark", {"html": False, "maxNesting": MAX_NESTING})


def nesting_exceeded(tokens: Sequence[Token]) -> bool:
    """Whether a parse came near markdown-it's nesting limit.

    Past the limit the parser drops content without a word, so a message nested
    that deeply cannot be shown as formatted text without hiding part of it. Two
    levels of margin: no honest answer nests eighteen deep.
    """
    limit = MAX_NESTING - 2
    return any(
        token.level >= limit or any(child.level >= limit for child in token.children or ())
        for token in tokens
    )


def find_citations(markdown: str) -> list[Citation]:
    """Every citation link in ``markdown``, in order.

    Code spans, code blocks and images are text, not citations; links that are
    not citations are ignored. A message nested too deeply to parse whole has
    none: the viewer shows it as plain text, where no link is live.
    """
    tokens = _parser().parse(markdown)
    if nesting_exceeded(tokens):
        return []
    citations: list[Citation] = []
    for token in tokens:
        if token.type == "inline" and token.children:
            citations.extend(_inline_citations(token.children))
    return citations


def _inline_citations(children: list[Token]) -> list[Citation]:
    found: list[Citation] = []
    open_links: list[tuple[str, list[str]]] = []
    for child in children:
        if child.type == "link_open":
            open_links.append((str(child.attrGet("href") or ""), []))
        elif child.type == "link_close" and open_links:
            href, parts = open_links.pop()
            state, handle = classify_href(href)
            if state != "other":
                found.append(Citation(label="".join(parts), href=href, state=state, handle=handle))
        elif open_links and child.type in {"text", "code_inline"}:
            open_links[-1][1].append(child.content)
        elif open_links and child.type in {"softbreak", "hardbreak"}:
            open_links[-1][1].append(" ")
    return found
