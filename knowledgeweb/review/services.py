"""Review writes: verdicts (append-only) and a thread its owner adds to a queue.

``verdict_record`` is the one way a verdict is written, from the page, the API and any later
surface, so each gets the same checks in the same order: the write rate limit
(``RATE_LIMIT_WRITE``), who may judge (404 to whoever may not read the thread, 403 to a reader
who judges nothing here), the value (422 listing the allowed ones), the item (422 naming it),
the note (plain text, capped), then the quotas; nothing is written when any refuses.
"""

from __future__ import annotations

from uuid import UUID

from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.db.models import Sum
from django.db.models.functions import Length

from knowledgeweb.ops import ratelimit
from knowledgeweb.review.access import thread_access, thread_get_for_writer
from knowledgeweb.review.errors import ReviewForbiddenError, VerdictInvalidError, VerdictsPresentError
from knowledgeweb.review.models import NOTE_MAX_CHARS, ItemKind, QueueThread, ReviewQueue, Verdict
from knowledgeweb.review.selectors import (
    allowed_values,
    message_citation_count,
    message_item,
    thread_verdict_count,
)
from knowledgeweb.threads.errors import QuotaExceededError, ThreadNotFound
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.quotas import quotas
from knowledgeweb.threads.services import thread_delete
from knowledgeweb.threads.text import text_problem

NOT_A_REVIEWER = "You do not review this thread: only its queues' reviewers and lead record verdicts."


def verdict_record(
    *,
    reviewer: User | AnonymousUser,
    thread_id: UUID | str,
    message_id: UUID,
    kind: str,
    position: int,
    value: str,
    note: str = "",
    rate_key: str | None = None,
) -> Verdict:
    """Record ``reviewer``'s verdict ``value`` on one item of the thread and return it.

    ``kind`` is ``citation`` (``position`` counts the answer's citations from 1) or ``answer``
    (``position`` 0). ``rate_key`` is whom the write limit counts (the API's token, else the
    user). Raises ``ThreadNotFound`` (404), ``ReviewForbiddenError`` (403),
    ``VerdictInvalidError`` (422), ``QuotaExceededError`` (413) or ``RateLimited`` (429).
    """
    ratelimit.consume("write", rate_key or f"user:{reviewer.pk}")
    access = thread_access(user=reviewer, thread_id=thread_id)
    if not access.reviews:
        raise ReviewForbiddenError(NOT_A_REVIEWER)
    thread = access.thread
    name = _item_name(kind, message_id, position)
    if kind not in ItemKind.values:
        raise VerdictInvalidError(
            f"Unknown item kind {kind!r}: allowed are citation, answer.", allowed=ItemKind.values
        )
    allowed = allowed_values(kind)
    if value not in allowed:
        raise VerdictInvalidError(
            f"Unknown verdict {value!r} for {name}: allowed are {', '.join(allowed)}. Nothing was written.",
            item=name,
            allowed=allowed,
        )
    note = _checked_note(note, name)
    message, item = message_item(thread=thread, message_id=message_id, kind=kind, position=position)
    if message is None:
        raise VerdictInvalidError(f"No such answer in this thread: {name}. Nothing was written.", item=name)
    if item is None:
        count = message_citation_count(thread=thread, message_id=message_id)
        raise VerdictInvalidError(
            f"No such citation: {name} (the answer has {count} citation{'s' if count != 1 else ''}). "
            "Nothing was written.",
            item=name,
        )
    if not item.judgeable:
        state = "no source was found" if item.state == "unresolved" else "it is malformed"
        raise VerdictInvalidError(
            f"{name.capitalize()} takes no verdict: {state}; only a citation whose source was found "
            "is judged against it. Nothing was written.",
            item=name,
        )
    with transaction.atomic():
        _admit(reviewer_id=access.user_id, thread=thread, note=note)
        verdict = Verdict(
            thread=thread,
            message_id=message.id,
            kind=kind,
            position=position,
            href=item.href[:2048],
            label=item.label[:1000],
            value=value,
            note=note,
            reviewer_id=access.user_id,
        )
        verdict.save()
    return verdict


def _item_name(kind: str, message_id: UUID, position: int) -> str:
    if kind == ItemKind.CITATION:
        return f"citation {position} of answer {message_id}"
    return f"answer {message_id}"


def _checked_note(note: str, name: str) -> str:
    """The note as given (plain text: escaped wherever shown), refused when too long or unstorable."""
    if not isinstance(note, str):
        raise VerdictInvalidError(f"The note on {name} must be text. Nothing was written.", item=name)
    note = note.strip()
    if len(note) > NOTE_MAX_CHARS:
        raise VerdictInvalidError(
            f"The note on {name} holds {len(note)} characters; at most {NOTE_MAX_CHARS} are kept. "
            "Nothing was written.",
            item=name,
        )
    problem = text_problem(note)
    if problem is not None:
        raise VerdictInvalidError(f"The note on {name} {problem} Nothing was written.", item=name)
    return note


def _admit(*, reviewer_id: int, thread: Thread, note: str) -> None:
    """Refuse a verdict past the reviewer's quotas (decision 0123): at most as many verdicts on
    one thread as a thread may hold messages, and notes counted with the reviewer's own threads
    against the user's storage quota. Inside the write's transaction."""
    limits = quotas()
    mine = Verdict.objects.filter(thread=thread, reviewer_id=reviewer_id)
    count = mine.count()
    if count + 1 > limits.thread_messages:
        raise QuotaExceededError(
            f"Verdict quota exceeded: you recorded {count} verdicts on this thread; the limit is "
            f"{limits.thread_messages} (KNOWLEDGEWEB_QUOTA_THREAD_MESSAGES). Nothing was written.",
            quota="thread_messages",
        )
    size = len(note.encode("utf-8"))
    if not size:
        return
    threads = Thread.objects.filter(owner_id=reviewer_id).aggregate(total=Sum("content_bytes"))["total"] or 0
    notes = Verdict.objects.filter(reviewer_id=reviewer_id).aggregate(total=Sum(Length("note")))["total"] or 0
    total = int(threads) + int(notes)
    if total + size > limits.user_bytes:
        raise QuotaExceededError(
            f"Storage quota exceeded: your threads and notes hold {total} bytes and would hold "
            f"{total + size}; the limit is {limits.user_bytes} bytes (KNOWLEDGEWEB_QUOTA_USER_BYTES). "
            "Nothing was written.",
            quota="user_bytes",
        )


def queue_thread_add(*, owner: User | AnonymousUser, thread_id: UUID | str, queue_id: int) -> QueueThread:
    """Add ``owner``'s own thread to a queue they review in (or lead). Another's thread, or a
    queue they do not review in, is ``ThreadNotFound`` (404): nothing is said about either."""
    access = thread_access(user=owner, thread_id=thread_id)
    if not access.owner:
        raise ThreadNotFound("Thread not found.")
    queue = (
        ReviewQueue.objects.filter(pk=queue_id)
        .filter(pk__in=ReviewQueue.objects.filter(reviewers=access.user_id).values("pk"))
        .first()
    ) or ReviewQueue.objects.filter(pk=queue_id, lead_id=access.user_id).first()
    if queue is None:
        raise ThreadNotFound("Queue not found.")
    entry, _ = QueueThread.objects.get_or_create(
        queue=queue, thread=access.thread, defaults={"added_by_id": access.user_id}
    )
    return entry


def thread_delete_counted(
    *, owner: User | AnonymousUser, thread_id: UUID | str, confirm_verdicts: int | None = None
) -> int:
    """Delete ``owner``'s thread with its verdicts, and return how many verdicts went with it.

    A thread holding verdicts is deleted only when ``confirm_verdicts`` equals their count
    (``VerdictsPresentError``, 409, naming it otherwise: nothing is deleted). A reviewer or
    lead of the thread gets ``ReviewForbiddenError`` (403), anyone else ``ThreadNotFound``.
    """
    thread = thread_get_for_writer(user=owner, thread_id=thread_id)
    count = thread_verdict_count(thread_id=thread.pk)
    if count and confirm_verdicts != count:
        plural = "verdict" if count == 1 else "verdicts"
        raise VerdictsPresentError(
            f"This thread holds {count} reviewers' {plural}; they would be deleted with it. "
            f"Confirm with confirm_verdicts={count}. Nothing was deleted.",
            verdicts=count,
        )
    thread_delete(owner=owner, thread_id=thread.pk)
    return count
