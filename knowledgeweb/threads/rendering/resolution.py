"""Citation resolution, the last stage of the render pipeline (docs/contract.md#reading-evidence, §8).

Runs over the sanitized token stream. Which ``<a>`` is a citation, and its
verdict, come from the link grammar's parse of the same message: the ``<a>``
elements markdown-it emitted are, in order, the grammar's links, and each
citation among them is replaced by exactly one of the stable hooks:

- resolved: ``<a class="citation" data-citation="resolved" data-source-id="ID"
  href="#knowledge-source-ID">label</a>`` (native: ``href="#knowledge-<id>"``),
  the same markup whichever accepted form the answer wrote;
- unresolved / malformed: ``<span class="citation" data-citation="..."
  title="why">label</span>``, nothing to click.

The verdict itself comes from ``knowledgeweb.threads.evidence.resolve_citation``,
the one validator; this module only decides markup.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from knowledgeweb.knowledge.linkgrammar import Link
from knowledgeweb.threads.evidence import ResolvedCitation
from knowledgeweb.threads.rendering.sanitizer import FilterBase, href_target

Token = dict[str, Any]
Attrs = dict[tuple[str | None, str], str]


def _start(name: str, attrs: Attrs) -> Token:
    return {"type": "StartTag", "name": name, "namespace": None, "data": attrs}


def _end(name: str) -> Token:
    return {"type": "EndTag", "name": name, "namespace": None}


def citation_tokens(verdict: ResolvedCitation, inner: list[Token]) -> list[Token]:
    """The hook for one verdict, wrapped around the link's own (sanitized) label tokens."""
    if verdict.state == "resolved" and verdict.source is not None:
        source = verdict.source
        attrs: Attrs = {
            (None, "class"): "citation",
            (None, "data-citation"): "resolved",
            (None, "data-source-id"): source.id,
            (None, "href"): "#" + source.handle,
        }
        return [_start("a", attrs), *inner, _end("a")]
    attrs = {
        (None, "class"): "citation",
        (None, "data-citation"): verdict.state,
        (None, "title"): verdict.reason,
    }
    return [_start("span", attrs), *inner, _end("span")]


class GrammarMismatchError(Exception):
    """The HTML's links are not the grammar's links (never expected: markdown-it emits no raw HTML)."""


class CitationFilter(FilterBase):
    """Wrap the ``<a>`` of each citation link in its hook, in document order.

    ``links`` are every link of the message as the grammar found them and
    ``verdicts`` the verdicts of the citations among them, in order. HTML never
    nests ``<a>``, so a link ends at the next ``</a>``. Any disagreement between
    the HTML and the grammar raises ``GrammarMismatchError`` rather than guessing.
    """

    def __init__(self, source: Any, *, links: Sequence[Link], verdicts: Sequence[ResolvedCitation]) -> None:
        super().__init__(source)
        self.links = links
        self.verdicts = verdicts

    def __iter__(self) -> Iterator[Token]:
        links = iter(self.links)
        verdicts = iter(self.verdicts)
        hook: tuple[ResolvedCitation, list[Token]] | None = None
        for token in super().__iter__():
            if hook is not None:
                if token["type"] == "EndTag" and token["name"] == "a":
                    yield from citation_tokens(*hook)
                    hook = None
                else:
                    hook[1].append(token)
                continue
            if token["type"] == "StartTag" and token["name"] == "a":
                link = next(links, None)
                href = token.get("data", {}).get((None, "href"))
                if link is None or (href is not None and href_target(str(href)) != link.href.strip()):
                    raise GrammarMismatchError("the rendered links differ from the grammar's links")
                if link.is_citation:
                    verdict = next(verdicts, None)
                    if verdict is None:
                        raise GrammarMismatchError("a citation link has no verdict")
                    hook = (verdict, [])
                    continue
            yield token
        if hook is not None:  # an unclosed link still gets its hook
            yield from citation_tokens(*hook)
        if next(links, None) is not None:
            raise GrammarMismatchError("the grammar found links the HTML does not hold")
