"""How far a queue's reviewers agree on citations, and which items they dispute.

Krippendorff's alpha (nominal, computed by the ``krippendorff`` package) over every
citation item at least one reviewer judged, reviewers as coders; Cohen's kappa as well
when exactly two reviewers judged. "Can't tell" is a missing value: it neither agrees
nor disagrees. An item is *disputed* when two reviewers gave different values
("can't tell" not counted), answers included; the lead settles it with a final verdict.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import krippendorff
import numpy as np

from knowledgeweb.review.items import Item, ItemKey, Judgement, is_disputed, threads_items
from knowledgeweb.review.models import CitationVerdict, FinalVerdict, ItemKind, ReviewQueue
from knowledgeweb.review.queueing import queue_threads

#: Codes of the citation verdicts in the reliability matrix ("can't tell" is missing).
CODES = {
    CitationVerdict.SUPPORTS.value: 1.0,
    CitationVerdict.PARTLY_SUPPORTS.value: 2.0,
    CitationVerdict.DOES_NOT_SUPPORT.value: 3.0,
}


def krippendorff_alpha(matrix: Sequence[Sequence[float | None]]) -> float | None:
    """Nominal alpha of a coders by units matrix (None for missing); None when undefined
    (fewer than two pairable values, or a single value everywhere)."""
    data = np.array([[np.nan if v is None else v for v in row] for row in matrix], dtype=float)
    if data.size == 0:
        return None
    pairable = np.sum(~np.isnan(data), axis=0) >= 2
    values = data[:, pairable]
    if values.size == 0 or len(set(values[~np.isnan(values)].tolist())) < 2:
        return None
    alpha = float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    return None if math.isnan(alpha) else alpha


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two raters over the units both rated; None when undefined."""
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(1 for a, b in pairs if a == b) / n
    categories = {v for pair in pairs for v in pair}
    expected = sum(
        (sum(1 for a, _ in pairs if a == c) / n) * (sum(1 for _, b in pairs if b == c) / n)
        for c in categories
    )
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


@dataclass
class DisputedItem:
    """An item two reviewers judged differently, with everyone's latest verdict."""

    item: Item
    judgements: dict[int, Judgement]
    final: str | None = None


@dataclass
class QueueAgreement:
    """Agreement of a queue's reviewers on citations, and the disputed items."""

    reviewers: list[int] = field(default_factory=list)
    units: int = 0
    alpha: float | None = None
    kappa: float | None = None
    disputed: list[DisputedItem] = field(default_factory=list)


def queue_agreement(queue: ReviewQueue) -> QueueAgreement:
    """Alpha (and kappa for exactly two reviewers) over the queue's judged citations."""
    thread_ids = list(queue_threads(queue).values_list("id", flat=True))
    judged = threads_items(thread_ids)
    finals = latest_finals(queue)
    result = QueueAgreement()
    units: list[dict[int, Judgement]] = []
    for thread_id in thread_ids:
        items = judged[thread_id]
        for item in items.items:
            judgements = items.judged_by(item.key)
            if not judgements:
                continue
            if item.key.kind == ItemKind.CITATION:
                units.append(judgements)
            if is_disputed(judgements):
                result.disputed.append(DisputedItem(item, judgements, finals.get(item.key)))
    reviewers = sorted({r for unit in units for r in unit})
    result.reviewers, result.units = reviewers, len(units)
    matrix = [[_code(unit.get(r)) for unit in units] for r in reviewers]
    result.alpha = krippendorff_alpha(matrix)
    if len(reviewers) == 2:
        first, second = reviewers
        pairs = [
            (unit[first].value, unit[second].value)
            for unit in units
            if _code(unit.get(first)) is not None and _code(unit.get(second)) is not None
        ]
        result.kappa = cohen_kappa(pairs)
    return result


def visible_judgements(disputed: DisputedItem, user_id: int, *, leads: bool) -> dict[int, Judgement]:
    """The verdicts on a disputed item ``user_id`` may see: all for the lead, else all once
    they judged the item themselves, else none (blind by default, as in review mode)."""
    return disputed.judgements if leads or user_id in disputed.judgements else {}


def _code(judgement: Judgement | None) -> float | None:
    return None if judgement is None else CODES.get(judgement.value)


def latest_finals(queue: ReviewQueue) -> dict[ItemKey, str]:
    """The lead's latest final verdict on each item of ``queue``."""
    rows = FinalVerdict.objects.filter(queue=queue).order_by("created_at", "id")
    return {
        ItemKey(message_id, kind, position): value
        for message_id, kind, position, value in rows.values_list("message_id", "kind", "position", "value")
    }
