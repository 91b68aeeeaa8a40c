"""The thread list's review side (issue 27): filters over the threads of my queues, and each
listed thread's review state.

Filters: ``mine`` (needs my review), ``does-not-support`` (a citation judged "does not
support") and ``disputed``. Blind by default holds here too: a reviewer who is not the
queue's lead matches the last two only on items they judged themselves, so a filter never
tells them what another reviewer said before they did.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from uuid import UUID

from django.contrib.auth.models import AnonymousUser, User

from knowledgeweb.review.items import Judgement, is_disputed
from knowledgeweb.review.models import ReviewQueue
from knowledgeweb.review.queueing import ThreadProgress, queue_threads, queues_for_reviewer, threads_progress

#: The filters the thread list offers, with the words it shows for each.
FILTERS = {
    "mine": "Needs my review",
    "does-not-support": "Has “does not support”",
    "disputed": "Disputed",
}


@dataclass(frozen=True)
class ListedState:
    """A thread's state in one of my queues, as the list shows it."""

    queue: str
    state: str


def _visible(progress: ThreadProgress, user_id: int, *, leads: bool) -> list[dict[int, Judgement]]:
    """Each item's verdicts the user may see: all for the lead, else only items they judged."""
    return [j for j in progress.judged.verdicts.values() if leads or user_id in j]


def _matches(name: str, progress: ThreadProgress, user_id: int, *, leads: bool) -> bool:
    if name == "mine":
        return progress.needs(user_id)
    items = _visible(progress, user_id, leads=leads)
    if name == "does-not-support":
        return any(j.value == "does_not_support" for judgements in items for j in judgements.values())
    return name == "disputed" and any(is_disputed(judgements) for judgements in items)


def _my_progress(user: User | AnonymousUser) -> list[tuple[ReviewQueue, dict[UUID, ThreadProgress]]]:
    found = []
    for queue in queues_for_reviewer(user=user):
        thread_ids = list(queue_threads(queue).values_list("id", flat=True))
        found.append((queue, threads_progress(queue, thread_ids)))
    return found


def review_filter_thread_ids(*, user: User | AnonymousUser, name: str) -> list[UUID]:
    """The threads of my queues that the filter ``name`` keeps (see ``FILTERS``)."""
    if name not in FILTERS or not user.is_authenticated:
        return []
    kept: dict[UUID, None] = {}
    for queue, progress in _my_progress(user):
        leads = queue.lead_id == user.pk
        for thread_id, entry in progress.items():
            if _matches(name, entry, user.pk, leads=leads):
                kept[thread_id] = None
    return list(kept)


def review_states(*, user: User | AnonymousUser, thread_ids: Sequence[UUID]) -> dict[UUID, list[ListedState]]:
    """Each listed thread's state in every queue of mine that holds it."""
    states: dict[UUID, list[ListedState]] = {}
    if not thread_ids or not user.is_authenticated:
        return states
    wanted = set(thread_ids)
    for queue in queues_for_reviewer(user=user):
        held = list(queue_threads(queue).filter(pk__in=wanted).values_list("id", flat=True))
        for thread_id, entry in threads_progress(queue, held).items():
            states.setdefault(thread_id, []).append(ListedState(queue.name, str(entry.state)))
    return states
