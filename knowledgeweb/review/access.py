"""Who may read which thread, and who may judge it (issue 26, "Review part 1").

A thread is read by its owner; by the reviewers and the lead of every queue it enters; and,
in the viewer only, by staff holding ``threads.view_thread`` (``threads.selectors.reads_any_thread``).
Everyone else gets ``ThreadNotFound`` (404), the same as for a missing thread. A queue grants
*reading* only: a reviewer or lead asking to write to a thread they do not own is told so
(``ReviewForbiddenError``, 403), everyone else still gets the 404.

A thread enters a queue when its owner is one of the queue's ``owners`` and, if the queue names
any ``agent_names``, its self-declared agent name is one of them (names only ever narrow); or
when its owner added it (``QueueThread``). The whole answer costs one query after the thread's.
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Exists, OuterRef, Q, QuerySet

from knowledgeweb.ops.prepared import PreparedQuery, as_field
from knowledgeweb.review.errors import ReviewForbiddenError
from knowledgeweb.review.models import QueueThread, ReviewQueue
from knowledgeweb.threads.errors import ThreadNotFound
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.selectors import reads_any_thread

NOT_FOUND = "Thread not found."
READ_ONLY = "You may read this thread as its reviewer, but only its owner may change it."


@dataclass(frozen=True, slots=True)
class ThreadAccess:
    """What one user may do with one thread."""

    thread: Thread
    #: Whose access this is.
    user_id: int
    #: The user owns the thread (reads and writes it).
    owner: bool
    #: The queues containing the thread in which the user reviews (or leads).
    queues: tuple[ReviewQueue, ...]
    #: The subset of ``queues`` the user leads.
    led: tuple[ReviewQueue, ...]
    #: Staff reading any thread in the viewer (never writing, never judging).
    staff: bool = False

    @property
    def reviews(self) -> bool:
        """The user may record verdicts on this thread's items."""
        return bool(self.queues)

    @property
    def leads(self) -> bool:
        """The user leads a queue containing the thread: they see every verdict."""
        return bool(self.led)

    @property
    def sees_all_verdicts(self) -> bool:
        """Every verdict is shown to this reader (a lead, or anyone who reads without judging);
        a reviewer sees others' verdicts only on what they judged themselves (blind review)."""
        return self.leads or not self.reviews

    @property
    def role(self) -> str:
        """``owner``, ``lead``, ``reviewer`` or ``staff``: the strongest reason the user reads it."""
        if self.owner:
            return "owner"
        if self.led:
            return "lead"
        if self.queues:
            return "reviewer"
        return "staff"


def thread_queues_for_user(*, user: User | AnonymousUser, thread: Thread) -> list[ReviewQueue]:
    """The queues that contain ``thread`` and in which ``user`` reviews or leads (one query)."""
    if not user.is_authenticated or not user.is_active:
        return []
    queues = _QUEUES.run(
        owner_id=thread.owner_id,
        thread_id=thread.pk,
        added_id=thread.pk,
        reviewer_id=user.pk,
        lead_id=user.pk,
    )
    # ``added``: the thread's owner added it to the queue, so agent names (which narrow only
    # the threads a queue takes by owner) do not apply.
    return [
        q
        for q in queues
        if q.added or queue_admits_agent(queue=q, agent_name=thread.agent_name)  # type: ignore[attr-defined]
    ]


def _queues(
    *, owner_id: int, thread_id: UUID, added_id: UUID, reviewer_id: int, lead_id: int
) -> QuerySet[ReviewQueue]:
    # Each value is used once (a filter on an annotation would repeat it): what a prepared
    # query needs to find its place.
    added = QueueThread.objects.filter(queue_id=OuterRef("pk"))
    return (
        ReviewQueue.objects.annotate(added=Exists(added.filter(thread_id=added_id)))
        .filter(
            Exists(_OWNERS.objects.filter(reviewqueue_id=OuterRef("pk"), user_id=owner_id))
            | Exists(added.filter(thread_id=thread_id))
        )
        .filter(
            Exists(_REVIEWERS.objects.filter(reviewqueue_id=OuterRef("pk"), user_id=reviewer_id))
            | Q(lead_id=lead_id)
        )
    )


def _thread(*, key: UUID) -> QuerySet[Thread]:
    # The thread's source numbers (one entry per cited source: thousands in a long thread)
    # are read when a reader needs them, never by a page served as stored (decision 0108).
    return Thread.objects.filter(pk=key).defer("source_numbers")


# Every read of a thread by any route starts here (knowledgeweb/ops/prepared.py).
_THREAD = PreparedQuery(
    _thread, placeholders={"key": UUID(int=20_261_200)}, prepare={"key": as_field(Thread, "id")}
)


_OWNERS = ReviewQueue.owners.through
_REVIEWERS = ReviewQueue.reviewers.through
# Every page of a thread asks this: compiled once, it costs a fraction of building three
# ``Exists`` per request (knowledgeweb/ops/prepared.py).
_QUEUES = PreparedQuery(
    _queues,
    placeholders={
        "owner_id": -20_261_201,
        "thread_id": UUID(int=20_261_202),
        "added_id": UUID(int=20_261_203),
        "reviewer_id": -20_261_204,
        "lead_id": -20_261_205,
    },
    prepare={"thread_id": as_field(Thread, "id"), "added_id": as_field(Thread, "id")},
)


def queue_admits_agent(*, queue: ReviewQueue, agent_name: str) -> bool:
    """Whether a thread of one of ``queue``'s owners with ``agent_name`` enters it: every name
    when the queue lists none, else only the exact names it lists."""
    names = queue.agent_names if isinstance(queue.agent_names, list) else []
    return not names or agent_name in names


def thread_access(*, user: User | AnonymousUser, thread_id: UUID | str, staff: bool = False) -> ThreadAccess:
    """What ``user`` may do with the thread, or ``ThreadNotFound`` when they may not read it
    (the same for a missing thread and a malformed id). ``staff=True`` lets staff holding
    ``threads.view_thread`` read it too (the viewer's pages; the API and MCP never do)."""
    if not user.is_authenticated:
        raise ThreadNotFound(NOT_FOUND)
    try:
        key = thread_id if isinstance(thread_id, UUID) else UUID(str(thread_id))
    except ValueError as exc:
        raise ThreadNotFound(NOT_FOUND) from exc
    found = _THREAD.run(key=key)
    if not found:
        raise ThreadNotFound(NOT_FOUND)
    thread = found[0]
    if thread.owner_id == user.pk:
        thread.owner = user  # the reader is the owner: no query to name them
    queues = thread_queues_for_user(user=user, thread=thread)
    owner = thread.owner_id == user.pk
    led = tuple(q for q in queues if q.lead_id == user.pk)
    access = ThreadAccess(thread=thread, user_id=user.pk, owner=owner, queues=tuple(queues), led=led)
    if owner or queues:
        return access
    if staff and reads_any_thread(user):
        return ThreadAccess(thread=thread, user_id=user.pk, owner=False, queues=(), led=(), staff=True)
    raise ThreadNotFound(NOT_FOUND)


def thread_get_for_review_reader(
    *, reader: User | AnonymousUser, thread_id: UUID | str, staff: bool = False
) -> Thread:
    """The thread, if ``reader`` may read it (``thread_access``); otherwise ``ThreadNotFound``."""
    return thread_access(user=reader, thread_id=thread_id, staff=staff).thread


def thread_get_for_writer(*, user: User | AnonymousUser, thread_id: UUID | str) -> Thread:
    """The thread, if ``user`` owns it. A reviewer or lead of it gets ``ReviewForbiddenError``
    (403: they know it exists); everyone else ``ThreadNotFound`` (404)."""
    access = thread_access(user=user, thread_id=thread_id)
    if not access.owner:
        raise ReviewForbiddenError(READ_ONLY)
    return access.thread


def message_get_for_review_reader(
    *, reader: User | AnonymousUser, message_id: UUID, staff: bool = False
) -> Message:
    """The message, if ``reader`` may read its thread; otherwise ``ThreadNotFound``."""
    thread_id = Message.objects.filter(pk=message_id).values_list("thread_id", flat=True).first()
    if thread_id is None:
        raise ThreadNotFound("Message not found.")
    try:
        thread_access(user=reader, thread_id=thread_id, staff=staff)
    except ThreadNotFound as exc:
        raise ThreadNotFound("Message not found.") from exc
    return Message.objects.get(pk=message_id)
