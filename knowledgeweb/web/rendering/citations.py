"""Citation resolution, the last stage of the render pipeline (SPEC §3.3, §8).

Runs over the sanitized token stream, so it only ever sees links the sanitizer
kept. Every ``<a>`` whose href looks like a knowledge citation is replaced by
exactly one of the stable hooks:

- resolved: ``<a class="citation" data-citation="resolved" data-source-id="ID"
  href="#knowledge-source-ID">label</a>`` (native: ``href="#knowledge-<id>"``),
  the same markup whichever accepted form the answer wrote;
- unresolved / malformed: ``<span class="citation" data-citation="..."
  title="why">label</span>``, nothing to click.

The verdict itself comes from ``knowledgeweb.threads.evidence.resolve_citation``,
the one validator; this module only decides markup.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from bleach import html5lib_shim

from knowledgeweb.knowledge import Citation, Evidence, classify_href
from knowledgeweb.threads.evidence import ResolvedCitation, resolve_citation
from knowledgeweb.web.rendering.sanitizer import href_target

Token = dict[str, Any]
Attrs = dict[tuple[str | None, str], str]


def _start(name: str, attrs: Attrs) -> Token:
    return {"type": "StartTag", "name": name, "namespace": None, "data": attrs}


def _end(name: str) -> Token:
    return {"type": "EndTag", "name": name, "namespace": None}


def _label(tokens: list[Token]) -> str:
    parts: list[str] = []
    for token in tokens:
        if token["type"] in {"Characters", "SpaceCharacters"}:
            parts.append(token["data"])
        elif token["type"] == "Entity":
            parts.append(html5lib_shim.convert_entities(f"&{token['name']};"))
    return "".join(parts)


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


class CitationFilter(html5lib_shim.Filter):
    """Replace citation links with their hooks; record each verdict in ``verdicts``.

    HTML never nests ``<a>``, so a link ends at the next ``</a>``.
    """

    def __init__(
        self, source: Any, *, available: Mapping[str, Evidence], verdicts: list[ResolvedCitation]
    ) -> None:
        super().__init__(source)
        self.available = available
        self.verdicts = verdicts

    def __iter__(self) -> Iterator[Token]:
        link: tuple[Citation, list[Token]] | None = None
        for token in super().__iter__():
            if link is not None:
                if token["type"] == "EndTag" and token["name"] == "a":
                    citation, inner = link
                    citation = Citation(
                        label=_label(inner), href=citation.href, state=citation.state, handle=citation.handle
                    )
                    verdict = resolve_citation(citation, self.available)
                    self.verdicts.append(verdict)
                    yield from citation_tokens(verdict, inner)
                    link = None
                else:
                    link[1].append(token)
                continue
            if token["type"] == "StartTag" and token["name"] == "a":
                href = token.get("data", {}).get((None, "href"))
                if href is not None:
                    target = href_target(str(href))
                    state, handle = classify_href(target)
                    if state != "other":
                        link = (Citation(label="", href=target, state=state, handle=handle), [])
                        continue
            yield token
        if link is not None:  # an unclosed link still gets its hook
            citation, inner = link
            verdict = resolve_citation(citation, self.available)
            self.verdicts.append(verdict)
            yield from citation_tokens(verdict, inner)
