"""The verdicts a thread page's window lays over itself as chips, read by a query compiled once.

Every view of a thread page asks this, judged or not; building and compiling the queryset (a
join to the messages for the window's seq range and to the reviewers' names) cost more than
running it (knowledgeweb/ops/prepared.py).
"""

from __future__ import annotations

from uuid import UUID

from django.db.models import F, QuerySet

from knowledgeweb.ops.prepared import PreparedQuery, as_field
from knowledgeweb.review.models import Verdict
from knowledgeweb.review.selectors import VerdictView
from knowledgeweb.threads.models import Message, Thread


def window_verdicts(*, thread: Thread, seqs: tuple[int, int]) -> list[VerdictView]:
    """Every verdict on ``thread``'s messages from seq ``seqs[0]`` to ``seqs[1]`` (a page
    window's: a range, never a list of its hundred message ids), oldest first, with its
    reviewer's name and without its time (a chip never shows when; ``created_at`` is None)."""
    rows = _WINDOW_VERDICTS.run(thread_id=thread.pk, first=seqs[0], last=seqs[1])
    return [
        VerdictView(
            v.pk,
            v.message_id,
            v.kind,
            v.position,
            v.href,
            v.label,
            v.value,
            v.note,
            v.reviewer_id,
            v.reviewer_name,  # type: ignore[attr-defined]
            None,
        )
        for v in rows
    ]


def _window_verdicts(*, thread_id: UUID, first: int, last: int) -> QuerySet[Verdict]:
    return (
        Verdict.objects.filter(thread_id=thread_id, message__seq__gte=first, message__seq__lte=last)
        .annotate(reviewer_name=F("reviewer__username"))
        .only("message_id", "kind", "position", "href", "label", "value", "note", "reviewer_id")
        .order_by("created_at", "id")
    )


_WINDOW_VERDICTS = PreparedQuery(
    _window_verdicts,
    # Seqs are positive integers: a stand-in out of a field's range would be folded away.
    placeholders={"thread_id": UUID(int=20_261_211), "first": 2_026_121_212, "last": 2_026_121_213},
    prepare={
        "thread_id": as_field(Thread, "id"),
        "first": as_field(Message, "seq"),
        "last": as_field(Message, "seq"),
    },
)
