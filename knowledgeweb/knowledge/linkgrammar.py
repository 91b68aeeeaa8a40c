"""The one link grammar: which parts of a Markdown text are links, and which links are citations.

Every feature that needs to know "is this a citation?" asks here, from the same
markdown-it token stream the viewer renders: the viewer's citation hooks, the
citation report, the Markdown export and the tool-output budget. There is no
second scanner and no regular expression over Markdown (docs/decisions/0015-one-link-grammar.md).

Decisions:

- The grammar is CommonMark with three GitHub extensions: tables,
  ``~~strikethrough~~`` and bare URLs as links ("linkify": only URLs written with
  ``http://``, ``https://`` or ``mailto:``, and e-mail addresses; never a bare host,
  since ``setup.py`` and ``README.md`` end in country domains).
  Bare URLs are found in bounded work by ``knowledge.linkify``.
- A *link* is every ``link_open`` among a paragraph's, heading's or table cell's
  inline tokens, autolinks and linkified URLs included: exactly what the viewer
  turns into ``<a>``.
  Links written inside an image's description are not links (the viewer shows
  the description as text), nor is anything inside a code span or code block.
- A link's *label* is its text as a reader sees it: text, code spans and image
  descriptions, line breaks read as spaces.
- A message nested past the parser's limit, holding more than ``MAX_TOKENS``
  tokens or more than ``MAX_BRACKETS`` opening brackets, has no links: the viewer shows it whole as written,
  where nothing is live. The token cap bounds what follows the parse (the
  sanitizer and the export's regeneration cost time per element): an honest
  answer holds a few hundred tokens, a hostile one tens of thousands.
- A message whose tables hold more than ``MAX_TABLE_CELLS`` cells in all is parsed
  again with tables off: its tables read as the paragraphs of text they are written
  as (links in them still links), on the page, in the report and in the export alike.
  Each cell costs the sanitizer and the export's table layout a little; a message
  may hold thousands.
- No link holds another link (CommonMark: "links may not contain other links").
  markdown-it already refuses a bracketed link or a bare URL inside a link's text,
  but not an autolink (``<https://…>``); here an autolink inside a link's text is
  text too, as a bare URL there is, so the outer link stands and is one link on
  the page, in the report and in the export alike.
- Each ``link_open`` carries its link's index in ``ParsedMarkdown.links``
  (``link_index``): renderers find a link's verdict by it, never by counting.
- markdown-it keeps no source offsets for inline tokens, so the grammar records
  each inline link's exact source text while parsing (a wrapper around the
  parser's own link rule, which decides nothing); the budget needs it to turn a
  link back into its label in text it must otherwise keep byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.helpers import parseLinkLabel
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline import autolink as autolink_rule
from markdown_it.rules_inline import link as link_rule
from markdown_it.token import Token

from knowledgeweb.counters import Counter
from knowledgeweb.knowledge.citations import Citation, HrefState, classify_href

# The bounded linkifier's cap and counter are read as the grammar's (bench, tests, docs).
from knowledgeweb.knowledge.linkify import MAX_LINKIFY_RUN as MAX_LINKIFY_RUN
from knowledgeweb.knowledge.linkify import bounded_linkifier, linkify_inline
from knowledgeweb.knowledge.linkify import linkify_counter as linkify_counter

#: Markdown parses actually run; tests assert that reads never move it.
parse_counter = Counter()

#: markdown-it stops descending at this depth and silently drops what lies deeper.
MAX_NESTING = 20
#: A message whose parse holds more tokens (blocks and inline elements) is shown as written.
MAX_TOKENS = 5_000
#: A message with more opening brackets is shown as written without being parsed: each
#: ``[`` makes markdown-it look for a link, the costliest thing hostile input can ask of it.
MAX_BRACKETS = 2_000
#: A message whose tables hold more cells (over all its tables) shows them as text.
MAX_TABLE_CELLS = 1_000

_SOURCE = "knowledgeweb_source"
_LABEL_SOURCE = "knowledgeweb_label_source"
_LINK_INDEX = "knowledgeweb_link_index"


@dataclass(frozen=True, slots=True)
class Link:
    """One link of a Markdown text, in document order.

    ``href`` is markdown-it's normalized destination (what the viewer's ``<a>``
    carries); ``state``/``handle`` are ``classify_href``'s verdict on it;
    ``source`` and ``label_source`` are the link and its label exactly as written
    in the inline text ("" for autolinks, which have no label to keep).
    """

    href: str
    label: str
    state: HrefState
    handle: str | None
    source: str = ""
    label_source: str = ""

    @property
    def is_citation(self) -> bool:
        return self.state != "other"

    def citation(self) -> Citation:
        if self.state == "other":
            raise ValueError("not a citation link")
        return Citation(label=self.label, href=self.href, state=self.state, handle=self.handle)


@dataclass(frozen=True, slots=True)
class ParsedMarkdown:
    """A parse: the token stream (for renderers), its env, and every link in order."""

    text: str
    tokens: list[Token]
    env: dict[str, Any]
    too_deep: bool
    links: tuple[Link, ...] = field(default=())
    too_large: bool = False
    #: Its tables held more than ``MAX_TABLE_CELLS`` cells: parsed with tables off.
    tables_as_text: bool = False

    @property
    def as_written(self) -> bool:
        """Whether the message is shown whole as written rather than formatted (no links)."""
        return self.too_deep or self.too_large

    @property
    def citations(self) -> list[Citation]:
        return [link.citation() for link in self.links if link.is_citation]


def _recording(rule: Callable[[StateInline, bool], bool]) -> Callable[[StateInline, bool], bool]:
    """Wrap the inline link rule so each ``link_open`` it emits carries its source text."""

    def wrapped(state: StateInline, silent: bool) -> bool:
        start = state.pos
        before = len(state.tokens)
        if not rule(state, silent):
            return False
        if not silent:
            end = state.pos
            for token in state.tokens[before:]:
                if token.type == "link_open":
                    token.meta[_SOURCE] = state.src[start:end]
                    label_end = parseLinkLabel(state, start, True)
                    state.pos = end
                    if label_end >= 0:
                        token.meta[_LABEL_SOURCE] = state.src[start + 1 : label_end]
                    break
        return True

    return wrapped


def _outside_links(rule: Callable[[StateInline, bool], bool]) -> Callable[[StateInline, bool], bool]:
    """Refuse ``rule`` (the autolink rule) inside a link's text: links never nest."""

    def wrapped(state: StateInline, silent: bool) -> bool:
        return state.linkLevel == 0 and rule(state, silent)

    return wrapped


@lru_cache(maxsize=2)
def markdown_parser(*, tables: bool = True) -> MarkdownIt:
    """The one parser configuration: CommonMark with GFM tables, strikethrough and bare
    URLs, raw HTML shown as text, bounded nesting.

    ``tables=False`` is the same grammar with tables read as paragraphs, for messages over
    ``MAX_TABLE_CELLS``; its options are the same, so renderers may use either's.
    """
    md = MarkdownIt("commonmark", {"html": False, "maxNesting": MAX_NESTING, "linkify": True})
    md.linkify = bounded_linkifier()
    md.enable(["strikethrough", "linkify", *(["table"] if tables else [])])
    md.inline.ruler.at("link", _recording(link_rule))
    md.inline.ruler.at("autolink", _outside_links(autolink_rule))
    md.inline.ruler.at("linkify", linkify_inline)
    return md


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


def parse_markdown(text: str, *, capped: bool = True) -> ParsedMarkdown:
    """Parse ``text`` once with the shared parser and find every link in it.

    ``capped=False`` lifts the structure caps (never the nesting limit), for text the
    application wrote itself from a message that passed them.
    """
    if capped and text.count("[") > MAX_BRACKETS:
        return ParsedMarkdown(text=text, tokens=[], env={}, too_deep=False, too_large=True)
    parse_counter.increment()
    env: dict[str, Any] = {}
    tokens = markdown_parser().parse(text, env)
    # Not a structure cap: which cells are tables is grammar, so it holds uncapped too.
    tables_as_text = table_cells(tokens) > MAX_TABLE_CELLS
    if tables_as_text:
        parse_counter.increment()
        env = {}
        tokens = markdown_parser(tables=False).parse(text, env)
    if nesting_exceeded(tokens):
        return ParsedMarkdown(text=text, tokens=tokens, env=env, too_deep=True, tables_as_text=tables_as_text)
    if capped and len(tokens) + sum(len(t.children or ()) for t in tokens) > MAX_TOKENS:
        return ParsedMarkdown(
            text=text, tokens=tokens, env=env, too_deep=False, too_large=True, tables_as_text=tables_as_text
        )
    links: list[Link] = []
    for token in tokens:
        if token.type == "inline" and token.children:
            links.extend(_inline_links(token.children, first=len(links)))
    return ParsedMarkdown(
        text=text, tokens=tokens, env=env, too_deep=False, links=tuple(links), tables_as_text=tables_as_text
    )


def table_cells(tokens: Sequence[Token]) -> int:
    """How many table cells (header and body, over all tables) a parse holds."""
    return sum(1 for token in tokens if token.type in {"th_open", "td_open"})


def find_citations(markdown: str) -> list[Citation]:
    """Every citation link in ``markdown``, in order (see the module's decisions)."""
    return parse_markdown(markdown).citations


def link_index(token: Token) -> int | None:
    """The index in ``ParsedMarkdown.links`` of the link a ``link_open`` token opens."""
    index = token.meta.get(_LINK_INDEX) if token.meta else None
    return index if isinstance(index, int) else None


def _inline_links(children: list[Token], *, first: int) -> list[Link]:
    found: list[Link] = []
    # CommonMark never nests a link in a link, but a stack keeps this honest whatever comes.
    open_links: list[tuple[Token, list[str]]] = []
    for child in children:
        if child.type == "link_open":
            open_links.append((child, []))
        elif child.type == "link_close" and open_links:
            opener, parts = open_links.pop()
            href = str(opener.attrGet("href") or "")
            state, handle = classify_href(href)
            opener.meta[_LINK_INDEX] = first + len(found)
            found.append(
                Link(
                    href=href,
                    label="".join(parts),
                    state=state,
                    handle=handle,
                    source=str(opener.meta.get(_SOURCE, "")),
                    label_source=str(opener.meta.get(_LABEL_SOURCE, "")),
                )
            )
            if open_links:
                open_links[-1][1].extend(parts)
        elif open_links:
            open_links[-1][1].append(visible_text(child))
    return found


def visible_text(token: Token) -> str:
    """An inline token's text as a reader sees it: text, code spans and image descriptions,
    line breaks read as spaces (a link's label; the claim around a citation)."""
    if token.type in {"text", "code_inline"}:
        return token.content
    if token.type in {"softbreak", "hardbreak"}:
        return " "
    if token.type == "image":
        return "".join(visible_text(child) for child in token.children or ())
    return ""


def unlink_citations(text: str, keep: Callable[[str], bool]) -> str:
    """``text`` with every well-formed citation whose handle ``keep`` refuses turned into its label.

    Everything else stays byte for byte. A link is replaced wherever its exact
    source text occurs, so an identical copy inside a code span loses its link
    syntax too: that only ever removes a citation, never makes one.
    """
    replaced = text
    for link in parse_markdown(text).links:
        if link.state == "candidate" and link.handle is not None and not keep(link.handle) and link.source:
            replaced = replaced.replace(link.source, link.label_source)
    return replaced
