"""One assistant message through the pipeline: markdown -> sanitize -> resolve (docs/architecture.md#pages-and-dom-hooks).

The message is parsed once, by ``linkgrammar``. Its citations and their
verdicts come from that parse; the sanitizer's pass only wraps the matching
``<a>`` elements in their hooks (see ``citations``).
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass
from functools import partial

from knowledgeweb.counters import Counter
from knowledgeweb.knowledge import Evidence
from knowledgeweb.knowledge.linkgrammar import ParsedMarkdown, parse_markdown
from knowledgeweb.threads.evidence import ResolvedCitation, resolve_citation
from knowledgeweb.threads.rendering.claims import citation_hooks
from knowledgeweb.threads.rendering.markdown import parsed_to_html, verbatim_html
from knowledgeweb.threads.rendering.resolution import CitationFilter, CitationHook, GrammarMismatchError
from knowledgeweb.threads.rendering.sanitizer import make_cleaner

#: Markdown renders actually run; tests read it (reads must never move it).
render_counter = Counter()


@dataclass(frozen=True, slots=True)
class RenderedContent:
    """Safe HTML of one message, the verdict of each citation in it (in order), and its parse.

    ``hooks`` are the verdicts as the page shows them (anchor, closest passage, label check).
    """

    html: str
    verdicts: tuple[ResolvedCitation, ...]
    parsed: ParsedMarkdown
    hooks: tuple[CitationHook, ...] = ()


def render_assistant_content(
    text: str,
    available: Mapping[str, Evidence],
    *,
    anchor_prefix: str = "cite",
    unsigned: Set[str] = frozenset(),
) -> RenderedContent:
    """Render assistant Markdown, resolving citations against ``available`` evidence.

    ``unsigned``: handles whose evidence an import stripped earlier (``resolve_citation``).

    Each citation's hook gets the id ``<anchor_prefix>-<n>`` (n counts the message's citations
    from 1); the page passes a prefix unique to the message.
    """
    render_counter.increment()
    parsed = parse_markdown(text)
    verdicts = tuple(
        resolve_citation(link.citation(), available, unsigned) for link in parsed.links if link.is_citation
    )
    hooks = tuple(citation_hooks(parsed, verdicts, anchor_prefix=anchor_prefix))
    stage = partial(CitationFilter, links=parsed.links, hooks=hooks)
    try:
        html = str(make_cleaner([stage]).clean(parsed_to_html(parsed)))
    except GrammarMismatchError:
        # Cannot happen while markdown-it emits no raw HTML; should it ever, nothing is
        # shown as a link whose verdict the report does not hold.
        shown = ParsedMarkdown(text=text, tokens=[], env={}, too_deep=True)
        return RenderedContent(html=str(make_cleaner().clean(verbatim_html(text))), verdicts=(), parsed=shown)
    return RenderedContent(html=html, verdicts=verdicts, parsed=parsed, hooks=hooks)
