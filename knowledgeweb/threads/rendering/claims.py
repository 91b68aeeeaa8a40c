"""What each citation of an answer claims, and the passage of its source closest to that claim.

A citation's *claim* is the sentence of the answer that holds its marker, read
from the grammar's token stream (the same parse the page shows): the plain
text of the paragraph, list item, heading or table cell, with every citation's
own label left out. The closest passage is the sentence(s) of the cited
excerpt that share the most significant words with it
(``knowledge.passages``; docs/decisions/0027-closest-passage-and-label-mismatch.md). It is a reading aid, never a verdict: the hook is resolved or not
by its evidence alone.

The work is bounded per message: excerpts are split once per source, and at
most ``MAX_COMPARISONS`` claim-to-sentence comparisons are made (a claim met again is
not compared again); citations past
that budget get no marked passage.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence

from markdown_it.token import Token

from knowledgeweb.knowledge import Evidence
from knowledgeweb.knowledge.linkgrammar import Link, ParsedMarkdown, visible_text
from knowledgeweb.knowledge.passages import claim_at, closest_sentences, label_mismatch
from knowledgeweb.knowledge.text import excerpt_segments
from knowledgeweb.threads.evidence import ResolvedCitation
from knowledgeweb.threads.rendering.resolution import CitationHook

#: Claim-to-sentence comparisons per message; an honest answer makes a few hundred.
MAX_COMPARISONS = 5_000


def citation_claims(parsed: ParsedMarkdown) -> list[str]:
    """The claim sentence of each citation link of ``parsed``, in order.

    A citation alone in a table cell (a "Source" column) claims what its row says: the
    row's other cells, read as one text.
    """
    claims: list[str] = []
    links = iter(parsed.links)
    row: list[str] | None = None  # the cells of the table row being read, if any
    pending: list[int] = []  # claims of the row still waiting for its text
    for token in parsed.tokens:
        if token.type == "tr_open":
            row, pending = [], []
        elif token.type == "tr_close" and row is not None:
            for index in pending:
                claims[index] = " ".join(cell for cell in row if cell)
            row, pending = None, []
        elif token.type == "inline" and token.children:
            text, markers = _block_text(token.children, links)
            if row is not None:
                row.append(text.strip())
            for claim in _claims(text, markers):
                if not claim and row is not None:
                    pending.append(len(claims))
                claims.append(claim)
    return claims


def answer_text(parsed: ParsedMarkdown) -> str:
    """What a reader sees of an answer as plain text, for search: its blocks' words and code,
    without link targets, markup or citation labels (a citation shows a number, not its label).
    """
    if parsed.as_written:
        return parsed.text
    links = iter(parsed.links)
    blocks: list[str] = []
    for token in parsed.tokens:
        if token.type == "inline" and token.children:
            text, _ = _block_text(token.children, links)
            blocks.append(text)
        elif token.type in {"fence", "code_block"}:
            blocks.append(token.content.rstrip("\n"))
    return "\n".join(block for block in blocks if block.strip())


def _claims(text: str, markers: Sequence[int]) -> list[str]:
    """``claim_at`` for each marker of one block, the block split into sentences once.

    Each claim is read from a window of five sentences around its marker, so a block of
    a thousand cited sentences costs one split, not a thousand (bench/hostile.py).
    """
    if len(markers) <= 1:
        return [claim_at(text, position) for position in markers]
    spans: list[tuple[int, int]] = []
    offset = 0
    for segment in excerpt_segments(text):
        if segment.kind == "sentence":
            spans.append((offset, offset + len(segment.text)))
        offset += len(segment.text)
    if not spans:
        return [claim_at(text, position) for position in markers]
    starts = [start for start, _ in spans]
    claims = []
    for position in markers:
        here = max(0, bisect_right(starts, max(position - 1, 0)) - 1)
        low = min(spans[max(here - 2, 0)][0], position)
        high = max(spans[min(here + 2, len(spans) - 1)][1], position)
        claims.append(claim_at(text[low:high], position - low))
    return claims


def _block_text(children: Sequence[Token], links: Iterator[Link]) -> tuple[str, list[int]]:
    """A block's visible text without citation labels, and where each citation stood."""
    parts: list[str] = []
    length = 0
    markers: list[int] = []
    skipping = 0  # depth inside a citation link, whose label is not part of the claim
    for child in children:
        if child.type == "link_open":
            link = next(links, None)
            if skipping:
                skipping += 1
            elif link is not None and link.is_citation:
                markers.append(length)
                skipping = 1
            continue
        if child.type == "link_close":
            skipping = max(0, skipping - 1)
            continue
        if skipping:
            continue
        piece = visible_text(child)
        parts.append(piece)
        length += len(piece)
    return "".join(parts), markers


def citation_hooks(
    parsed: ParsedMarkdown, verdicts: Sequence[ResolvedCitation], *, anchor_prefix: str
) -> list[CitationHook]:
    """Each verdict's hook: its anchor (``<anchor_prefix>-<n>``), closest passage and label check."""
    claims = citation_claims(parsed) if any(v.state == "resolved" for v in verdicts) else []
    sentences: dict[str, list[str]] = {}
    closest: dict[tuple[str, str], tuple[int, ...]] = {}
    budget = MAX_COMPARISONS
    hooks: list[CitationHook] = []
    for number, verdict in enumerate(verdicts, start=1):
        anchor = f"{anchor_prefix}-{number}"
        source = verdict.source
        if verdict.state != "resolved" or source is None:
            hooks.append(CitationHook(verdict, anchor))
            continue
        found = sentences.get(source.handle)
        if found is None:
            found = sentences[source.handle] = _sentences(source)
        passage: tuple[int, ...] = ()
        if number <= len(claims):
            key = (claims[number - 1], source.handle)
            if key in closest:
                passage = closest[key]
            elif len(found) <= budget:
                budget -= len(found)
                passage = closest[key] = closest_sentences(claims[number - 1], found)
        hooks.append(CitationHook(verdict, anchor, passage, label_mismatch(verdict.label, _names(source))))
    return hooks


def _sentences(source: Evidence) -> list[str]:
    return [s.text for s in excerpt_segments(source.excerpt) if s.kind == "sentence"]


def _names(source: Evidence) -> list[str]:
    """What a source is called: its title (the document's name) and its dataset's name."""
    return [name for name in (source.title, source.dataset_name) if name]
