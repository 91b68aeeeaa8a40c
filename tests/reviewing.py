"""A review world shared by the review tests: an agent's thread in a queue, and every role.

The agent (``owner``) wrote a thread with one search and two answers: the first cites a found
source twice (once with a label naming another source), a source never retrieved (no source)
and a mangled href (malformed); the second cites nothing. Users: the queue's ``reviewer`` and
``second`` reviewer, its ``lead``, a reviewer of ``another`` queue, a ``removed`` reviewer
(taken off the queue after judging) and an ``outsider``.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User

from knowledgeweb.knowledge import RetrievalHit
from knowledgeweb.review.models import ReviewQueue
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.services import message_append, thread_create
from tests.searches import hit_handles, record_search

SPEECH = (
    "Four score and seven years ago our fathers brought forth on this continent a new nation. "
    "Now we are engaged in a great civil war, testing whether that nation can long endure. "
    "We are met on a great battle-field of that war."
)
PLANETS = "Mercury is the smallest planet. Its orbit takes 88 days."
GUIDELINES = "Judge each **claim** against the passage it cites.\n\n- *supports*: the passage says it."
#: Roles of the access matrix, in order.
ROLES = ("owner", "reviewer", "lead", "other_reviewer", "removed", "outsider")


@dataclass
class ReviewWorld:
    owner: User
    reviewer: User
    second: User
    lead: User
    other_reviewer: User
    removed: User
    outsider: User
    queue: ReviewQueue
    other_queue: ReviewQueue
    thread: Thread
    answer: Message
    uncited: Message
    handle: str

    def user(self, role: str) -> User:
        return getattr(self, role)


def review_world(*, agent_name: str = "triage-bot") -> ReviewWorld:
    """Build the world (call inside a test with database access)."""
    users = {
        name: User.objects.create_user(name, password=f"{name}-password-1")
        for name in ("agent", "reviewer", "second", "lead", "other_reviewer", "removed", "outsider")
    }
    owner = users["agent"]
    thread = thread_create(owner=owner, title="Lincoln and the planets", agent_name=agent_name)
    message_append(thread=thread, type="human", content="What did Lincoln say, and which planet is smallest?")
    _, formatted = record_search(
        thread,
        RetrievalHit(text=SPEECH, title="The Gettysburg Address", dataset_name="Speeches"),
        RetrievalHit(text=PLANETS, title="Planets primer", dataset_name="Astronomy"),
    )
    speech, planets = hit_handles(formatted)
    answer = message_append(
        thread=thread,
        type="ai",
        content=(
            f"They met on a great battle-field of that war [Gettysburg](#{speech}). "
            f"Mercury is the smallest planet [NASA Earth Fact Sheet](#{planets}). "
            "The Moon is far [Moon](#knowledge-source-" + "0" * 32 + ") "
            f"and [mangled](#{speech.upper()})."
        ),
    )
    message_append(thread=thread, type="human", content="Thanks?")
    uncited = message_append(thread=thread, type="ai", content="You are welcome; nothing more to add.")
    queue = ReviewQueue.objects.create(name="Agent answers", description="Triage bot", guidelines=GUIDELINES)
    queue.owners.add(owner)
    queue.reviewers.add(users["reviewer"], users["second"], users["removed"])
    queue.lead = users["lead"]
    queue.save()
    other_queue = ReviewQueue.objects.create(name="Other answers")
    other_queue.owners.add(users["outsider"])
    other_queue.reviewers.add(users["other_reviewer"])
    return ReviewWorld(
        owner=owner,
        reviewer=users["reviewer"],
        second=users["second"],
        lead=users["lead"],
        other_reviewer=users["other_reviewer"],
        removed=users["removed"],
        outsider=users["outsider"],
        queue=queue,
        other_queue=other_queue,
        thread=thread,
        answer=answer,
        uncited=uncited,
        handle=speech,
    )


def remove_reviewer(world: ReviewWorld) -> None:
    """Take ``removed`` off the queue (after whatever they judged)."""
    world.queue.reviewers.remove(world.removed)
