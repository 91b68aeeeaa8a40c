"""One assistant message through the pipeline: markdown -> sanitize -> resolve (docs/architecture.md#pages-and-dom-hooks).

The message is parsed once, by ``linkgrammar``. Its citations and their
verdicts come from that parse. The markdown stage writes each citation link as
a slot (``markdown.CITATION_SLOTS``), the sanitizer's one allowlist pass reads the
message's markup, and each slot is then filled with its citation's hook
(``resolution.citation_html``): the hooks are the page's own markup, so they are
never offered to the allowlist, and nothing the message writes can pose as one.

A slot is text no message can hold: it carries a digest of the message itself.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass

from knowledgeweb.counters import Counter
from knowledgeweb.knowledge import Evidence
from knowledgeweb.knowledge.linkgrammar import ParsedMarkdown, parse_markdown
from knowledgeweb.threads.evidence import ResolvedCitation, resolve_citation
from knowledgeweb.threads.rendering.claims import citation_hooks
from knowledgeweb.threads.rendering.markdown import parsed_to_html, verbatim_html
from knowledgeweb.threads.rendering.resolution import CitationHook, citation_html
from knowledgeweb.threads.rendering.sanitizer import sanitize_html

#: Markdown renders actually run; tests read it (reads must never move it).
render_counter = Counter()


class GrammarMismatchError(Exception):
    """The sanitized HTML does not hold each citation's slot exactly once (never expected:
    a slot is text, and the allowlist keeps all text)."""


def _slot_mark(text: str) -> str:
    # The message would have to hold a digest of itself to write a slot of its own.
    return "kw-citation-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


#: Any message's slot; ``_fill_slots`` fills only its own message's. One pattern for every
#: message: a pattern per mark was compiled once per message (past the ``re`` cache).
_SLOT = re.compile(r"\{(kw-citation-[0-9a-f]{32}):(\d+)\}")


def _fill_slots(html: str, mark: str, hooks: Sequence[str]) -> str:
    """``html`` with slot ``n`` of ``mark`` replaced by ``hooks[n]``; each slot exactly once."""
    seen: list[int] = []

    def hook(slot: re.Match[str]) -> str:
        if slot.group(1) != mark:
            return slot.group(0)  # text that looks like another message's slot stays as it is
        seen.append(int(slot.group(2)))
        return hooks[seen[-1]] if seen[-1] < len(hooks) else ""

    filled = _SLOT.sub(hook, html)
    if seen != list(range(len(hooks))):
        raise GrammarMismatchError("the rendered citations differ from the grammar's citations")
    return filled


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
    mark = _slot_mark(text)
    citing = [index for index, link in enumerate(parsed.links) if link.is_citation]
    slots = {index: f"{{{mark}:{number}}}" for number, index in enumerate(citing)}
    try:
        html = _fill_slots(
            sanitize_html(parsed_to_html(parsed, slots)), mark, [citation_html(hook) for hook in hooks]
        )
    except GrammarMismatchError:
        # Not expected; should it ever happen, nothing is shown as a citation whose verdict
        # the report does not hold.
        shown = ParsedMarkdown(text=text, tokens=[], env={}, too_deep=True)
        return RenderedContent(html=sanitize_html(verbatim_html(text)), verdicts=(), parsed=shown)
    return RenderedContent(html=html, verdicts=verdicts, parsed=parsed, hooks=hooks)
