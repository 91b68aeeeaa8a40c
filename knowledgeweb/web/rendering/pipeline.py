"""One assistant message through the pipeline: markdown -> sanitize -> resolve (SPEC §8)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial

from knowledgeweb.counters import Counter
from knowledgeweb.knowledge import Evidence
from knowledgeweb.threads.evidence import ResolvedCitation
from knowledgeweb.web.rendering.citations import CitationFilter
from knowledgeweb.web.rendering.markdown import markdown_to_html
from knowledgeweb.web.rendering.sanitizer import make_cleaner

#: Markdown renders actually run (fragment cache misses); tests read it.
render_counter = Counter()


@dataclass(frozen=True, slots=True)
class RenderedContent:
    """Safe HTML of one message and the verdict of each citation in it, in order."""

    html: str
    verdicts: tuple[ResolvedCitation, ...]


def render_assistant_content(text: str, available: Mapping[str, Evidence]) -> RenderedContent:
    """Render assistant Markdown, resolving citations against ``available`` evidence."""
    render_counter.increment()
    verdicts: list[ResolvedCitation] = []
    resolver = partial(CitationFilter, available=available, verdicts=verdicts)
    html = str(make_cleaner([resolver]).clean(markdown_to_html(text)))
    return RenderedContent(html=html, verdicts=tuple(verdicts))
