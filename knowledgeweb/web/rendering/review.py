"""Verdicts laid over a thread page at assembly, and the review mode's item cards.

A page with verdicts is the same page as one without: chips are inserted after each judged
citation's hook and after each judged answer's role line (``with_verdict_chips``), never a
reason to render or assemble a message again. A chip says its verdict with an icon *and* a word, never by
colour alone; notes are plain text, escaped here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from html import escape
from uuid import UUID

from django.utils.safestring import SafeString

from knowledgeweb.knowledge import Evidence
from knowledgeweb.knowledge.passages import excerpt_segments
from knowledgeweb.review.access import ThreadAccess
from knowledgeweb.review.models import ItemKind
from knowledgeweb.review.reading import ItemEvidence
from knowledgeweb.review.selectors import (
    VERDICT_ICONS,
    VERDICT_WORDS,
    ItemVerdicts,
    ReviewItem,
    ThreadReview,
    VerdictView,
    judged_items,
    thread_review,
)
from knowledgeweb.review.window_verdicts import window_verdicts
from knowledgeweb.web.rendering.stored import WindowPage

# A resolved hook's opening tag names its anchor; the hook ends at the first </a> (its
# number and title spans hold no link). Anchors are the page's own ids (cite-<hex>-<n>).
_EMPTY = SafeString("")
_HOOK = re.compile(r'id="cite-([0-9a-f]{32})-([0-9]+)"[^>]*>.*?</a>', re.S)


def chip(verdict: VerdictView, *, by: bool = True) -> str:
    """One verdict as a chip: icon (hidden from screen readers), word, and whose it is."""
    return _chip(verdict.value, verdict.reviewer_name if by else None, verdict.note)


@lru_cache(maxsize=4_096)
def _chip(value: str, reviewer_name: str | None, note: str) -> str:
    # A pure function of what it shows: a page of many verdicts repeats a few values and
    # names, so each chip's HTML is built and escaped once (bench/verdicts.py).
    word = escape(VERDICT_WORDS.get(value, value))
    icon = VERDICT_ICONS.get(value, "•")
    who = f'<span class="verdict-by"> · {escape(reviewer_name)}</span>' if reviewer_name is not None else ""
    note_html = f'<span class="verdict-note" data-verdict-note>{escape(note)}</span>' if note else ""
    return (
        f'<span class="verdict-chip verdict-{escape(value)}" data-verdict="{escape(value)}">'
        f'<span class="verdict-icon" aria-hidden="true">{icon}</span> {word}{who}{note_html}</span>'
    )


def _chips(entry: ItemVerdicts) -> str:
    latest = entry.latest
    if not latest:
        return ""
    inner = "".join(chip(v) for v in latest)
    return f'<span class="verdict-chips" data-verdict-chips="{escape(entry.item.key)}">{inner}</span>'


def with_verdict_chips(page: WindowPage, review: ThreadReview) -> WindowPage:
    """``page`` with the verdicts ``review`` lets its reader see laid over its messages: after
    each judged citation's hook, and after a judged answer's role line; the same page when
    there are none (the usual page costs nothing more). Only the judged messages' items are
    read, found by their places in the page, never by parsing it."""
    citations: dict[tuple[str, int], str] = {}
    answers: dict[str, str] = {}
    for entry in review.items:
        html = _chips(entry)
        if not html:
            continue
        if entry.item.kind == ItemKind.CITATION:
            citations[(entry.item.message_id.hex, entry.item.position)] = html
        else:
            answers[entry.item.message_id.hex] = html
    touched = {hex_id for hex_id, _ in citations} | set(answers)
    if not touched:
        return page

    def after(match: re.Match[str]) -> str:
        chips = citations.get((match.group(1), int(match.group(2))))
        return match.group(0) + chips if chips else match.group(0)

    items = str(page.items)
    pieces: list[str] = []
    cursor = 0
    for hex_id, start, end in page.places:
        if hex_id not in touched:
            continue
        item = _HOOK.sub(after, items[start:end]) if citations else items[start:end]
        answer = answers.get(hex_id)
        if answer:
            # An item opens with its role line (``MessageView.item``): the chips follow it.
            role_end = item.find("</p>") + len("</p>")
            item = (
                item[:role_end]
                + f'<p class="answer-verdicts">Verdicts on this answer: {answer}</p>'
                + item[role_end:]
            )
        pieces += [items[cursor:start], item]
        cursor = end
    pieces.append(items[cursor:])
    # Built from the page's sanitized items and escaped chips.
    return replace(page, items=SafeString("".join(pieces)))


@dataclass(frozen=True, slots=True)
class ReviewCard:
    """One item of review mode, ready for the template."""

    entry: ItemVerdicts
    number: int
    claim: str = ""
    source: Evidence | None = None
    passage_html: SafeString = _EMPTY
    excerpt_html: SafeString = _EMPTY
    answer_text: str = ""
    next_key: str = ""
    chips_html: SafeString = _EMPTY
    history_html: SafeString = _EMPTY

    @property
    def item(self) -> ReviewItem:
        return self.entry.item

    @property
    def choices(self) -> list[tuple[int, str, str, str]]:
        """(key, value, word, icon) of each verdict the item takes, in key order."""
        return [(n, v, VERDICT_WORDS[v], VERDICT_ICONS[v]) for n, v in enumerate(self.entry.item.values, 1)]


def review_cards(
    review: ThreadReview, evidence: Mapping[tuple[UUID, int], ItemEvidence], answers: Mapping[UUID, str]
) -> list[ReviewCard]:
    """Review mode's cards, in page order; each names the next item (where a verdict returns)."""
    entries: Sequence[ItemVerdicts] = review.items
    cards: list[ReviewCard] = []
    for index, entry in enumerate(entries):
        item = entry.item
        next_key = entries[index + 1].item.key if index + 1 < len(entries) else item.key
        found = evidence.get((item.message_id, item.position)) if item.kind == ItemKind.CITATION else None
        source = found.source if found is not None else None
        cards.append(
            ReviewCard(
                entry=entry,
                number=index + 1,
                claim=found.claim if found is not None else "",
                source=source,
                passage_html=_passage(source, item.passage, only=True),
                excerpt_html=_passage(source, item.passage, only=False),
                answer_text=answers.get(item.message_id, "") if item.kind == ItemKind.ANSWER else "",
                next_key=next_key,
                chips_html=SafeString(_chips(entry)),
                history_html=SafeString("".join(f"<li>{chip(v)}</li>" for v in entry.history)),
            )
        )
    return cards


def _passage(source: Evidence | None, passage: Sequence[int], *, only: bool) -> SafeString:
    """The source's excerpt (escaped) with the sentences closest to the claim marked; ``only``:
    just those sentences (the "closest passage")."""
    if source is None:
        return SafeString("")
    marked = set(passage)
    pieces: list[str] = []
    for segment in excerpt_segments(source.excerpt):
        hit = segment.kind == "sentence" and segment.index in marked
        if only:
            if hit:
                pieces.append(escape(segment.text))
            continue
        text = escape(segment.text)
        pieces.append(f'<mark class="passage-mark">{text}</mark>' if hit else text)
    return SafeString(" ".join(pieces) if only else "".join(pieces))


def page_verdicts(page: WindowPage, access: ThreadAccess) -> WindowPage:
    """``page`` with the verdicts ``access``'s reader may see laid over it. A thread never
    judged reads nothing; a reader who sees every verdict is served the stored page's overlay
    when it was made at the thread's verdict revision (one column read); anyone else's chips
    are laid over per view (decision 0110)."""
    thread = access.thread
    if not thread.verdict_revision:
        return page
    row = page.stored
    if row is not None and access.sees_all_verdicts and row.judged_revision == thread.verdict_revision:
        # Made from this stored page and every verdict at this revision (web.rendering.receivers).
        return replace(page, items=SafeString(row.judged_items))
    return overlaid(page, access)


def overlaid(page: WindowPage, access: ThreadAccess) -> WindowPage:
    """``page`` with the window's verdicts ``access``'s reader may see laid over it (two
    queries, or one when the window holds none)."""
    # Only the window's verdicts: a page costs what it shows, however much of the thread was judged.
    verdicts = window_verdicts(thread=access.thread, seqs=(page.first_seq, page.last_seq))
    if not verdicts:
        return page
    items = judged_items(verdicts=verdicts)
    return with_verdict_chips(
        page, thread_review(access=access, items=items, verdicts=verdicts, only_judged=True)
    )
