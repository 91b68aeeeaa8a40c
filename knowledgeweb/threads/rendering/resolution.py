"""Citation resolution, the last stage of the render pipeline (docs/contract.md#reading-evidence).

Runs over the sanitized token stream. Which ``<a>`` is a citation, and its
verdict, come from the link grammar's parse of the same message: the ``<a>``
elements markdown-it emitted are, in order, the grammar's links, and each
citation among them is replaced by exactly one of the stable hooks
(docs/architecture.md#pages-and-dom-hooks):

- resolved: ``<a class="citation" data-citation="resolved" data-source-id="ID"
  href="#knowledge-source-ID" id="cite-…">`` holding the source's number (filled
  in when the page is assembled: numbers are the thread's) and, for screen
  readers, the source's own title. The answer's label is never its text: a
  label that names another source is kept only as ``data-label`` for the dialog
  ("The answer labelled this citation …").
- unresolved / malformed: a ``<button type="button" class="citation">`` with
  the label (its ``citation:`` prefix removed) that toggles a native popover
  holding the reason, which is also its accessible description. Nothing to
  follow.

The verdict itself comes from ``knowledgeweb.threads.evidence.resolve_citation``,
the one validator; this module only decides markup.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from knowledgeweb.knowledge.citations import classify_href
from knowledgeweb.knowledge.linkgrammar import Link
from knowledgeweb.knowledge.passages import display_label
from knowledgeweb.threads.evidence import ResolvedCitation
from knowledgeweb.threads.rendering.sanitizer import OWN_ID_MARK, FilterBase, href_target

Token = dict[str, Any]
Attrs = dict[tuple[str | None, str], str]

#: The empty element the page fills with a resolved citation's number (``web.rendering.thread``).
#: Only the hooks write tags with a class, so text written in a message can never pose as one.
NUMBER_SLOT = '<span class="citation-number"></span>'

#: What an unverified citation shows in place of the answer's label (never its number), and
#: the heading of its reason (docs/decisions/0036-the-reader-honest-words-one-numbering.md).
STATE_WORDS = {"unresolved": "no source", "malformed": "malformed"}
STATE_NAMES = {"unresolved": "No source", "malformed": "Malformed citation"}
#: The words a label mismatch adds to its citation's accessible name and preview.
MISMATCH_WORDS = "label names another source"


@dataclass(frozen=True, slots=True)
class CitationHook:
    """A citation's verdict and what its hook shows: its anchor, the closest passage of
    its source (sentence numbers of the excerpt) and whether its label names another source."""

    verdict: ResolvedCitation
    anchor: str
    passage: tuple[int, ...] = ()
    label_mismatch: bool = False


def _start(name: str, attrs: Attrs) -> Token:
    return {"type": "StartTag", "name": name, "namespace": None, "data": attrs}


def _end(name: str) -> Token:
    return {"type": "EndTag", "name": name, "namespace": None}


def _text(text: str) -> Token:
    return {"type": "Characters", "data": text}


def citation_tokens(hook: CitationHook) -> list[Token]:
    """The tokens of one citation's hook."""
    verdict = hook.verdict
    if verdict.state == "resolved" and verdict.source is not None:
        source = verdict.source
        attrs: Attrs = {
            (None, "class"): "citation",
            (None, "data-citation"): "resolved",
            (None, "data-source-id"): source.id,
            (None, "href"): "#" + source.handle,
            (None, "id"): hook.anchor,
            OWN_ID_MARK: "",
        }
        if hook.passage:
            attrs[(None, "data-passage")] = " ".join(str(i) for i in hook.passage)
        flag: list[Token] = []
        if hook.label_mismatch:
            attrs[(None, "data-label")] = display_label(verdict.label)
            attrs[(None, "data-issue")] = "label-mismatch"
            flag = [
                _start("span", {(None, "class"): "citation-flag", (None, "aria-hidden"): "true"}),
                _text("≠"),
                _end("span"),
                _start("span", {(None, "class"): "visually-hidden"}),
                _text(f" ({MISMATCH_WORDS})"),
                _end("span"),
            ]
        return [
            _start("a", attrs),
            _start("span", {(None, "class"): "citation-number"}),
            _end("span"),
            _start("span", {(None, "class"): "visually-hidden"}),
            _text(f" {source.title}"),
            _end("span"),
            *flag,
            _end("a"),
        ]
    reason_id = f"{hook.anchor}-reason"
    button: Attrs = {
        (None, "type"): "button",
        (None, "class"): "citation",
        (None, "data-citation"): verdict.state,
        (None, "id"): hook.anchor,
        (None, "popovertarget"): reason_id,
        (None, "aria-describedby"): reason_id,
        (None, "data-issue"): verdict.state,
        OWN_ID_MARK: "",
    }
    reason: Attrs = {
        (None, "class"): "citation-reason",
        (None, "id"): reason_id,
        (None, "popover"): "auto",
        (None, "data-citation-reason"): verdict.state,
        OWN_ID_MARK: "",
    }
    # The reason's own text: the page puts a truer one in its place when the cited source was
    # retrieved only later or failed validation (``web.rendering.thread``), found by the handle.
    _, handle = classify_href(verdict.href)
    because: Attrs = {(None, "class"): "reason-text"}
    if verdict.state == "unresolved" and handle is not None:
        because[(None, "data-reason-handle")] = handle
    label = display_label(verdict.label)
    return [
        _start("button", button),
        _text(STATE_WORDS.get(verdict.state, "citation")),
        _end("button"),
        _start("span", reason),
        _start("strong", {}),
        _text(STATE_NAMES.get(verdict.state, "Citation") + ": "),
        _end("strong"),
        _start("span", because),
        _text(verdict.reason),
        _end("span"),
        _text(" The answer labelled it “" + label + "”; its link is " if label else " Its link is "),
        _start("code", {(None, "class"): "reason-href"}),
        _text(verdict.href),
        _end("code"),
        _text("."),
        _end("span"),
    ]


class GrammarMismatchError(Exception):
    """The HTML's links are not the grammar's links (never expected: markdown-it emits no raw HTML)."""


class CitationFilter(FilterBase):
    """Wrap the ``<a>`` of each citation link in its hook, in document order.

    ``links`` are every link of the message as the grammar found them and
    ``hooks`` the hooks (verdicts) of the citations among them, in order. HTML never
    nests ``<a>``, so a link ends at the next ``</a>``. Any disagreement between
    the HTML and the grammar raises ``GrammarMismatchError`` rather than guessing.
    """

    def __init__(self, source: Any, *, links: Sequence[Link], hooks: Sequence[CitationHook]) -> None:
        super().__init__(source)
        self.links = links
        self.hooks = hooks

    def __iter__(self) -> Iterator[Token]:
        links = iter(self.links)
        hooks = iter(self.hooks)
        hook: CitationHook | None = None
        for token in super().__iter__():
            if hook is not None:
                # The link's own label is dropped: a hook shows what its verdict allows.
                if token["type"] == "EndTag" and token["name"] == "a":
                    yield from citation_tokens(hook)
                    hook = None
                continue
            if token["type"] == "StartTag" and token["name"] == "a":
                link = next(links, None)
                href = token.get("data", {}).get((None, "href"))
                if link is None or (href is not None and href_target(str(href)) != link.href.strip()):
                    raise GrammarMismatchError("the rendered links differ from the grammar's links")
                if link.is_citation:
                    hook = next(hooks, None)
                    if hook is None:
                        raise GrammarMismatchError("a citation link has no verdict")
                    continue
            yield token
        if hook is not None:  # an unclosed link still gets its hook
            yield from citation_tokens(hook)
        if next(links, None) is not None:
            raise GrammarMismatchError("the grammar found links the HTML does not hold")
