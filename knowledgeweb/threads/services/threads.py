"""Creating and deleting threads."""

from __future__ import annotations

from uuid import UUID

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import ValidationError
from django.db import transaction

from knowledgeweb.threads.errors import ThreadInvalidError
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.quotas import thread_admit
from knowledgeweb.threads.selectors import thread_get_for_owner
from knowledgeweb.threads.text import unstorable_field


def thread_create(*, owner: User, title: str, agent_name: str = "") -> Thread:
    """Create an empty thread owned by ``owner``."""
    problem = unstorable_field({"title": title, "agent_name": agent_name})
    if problem is not None:
        raise ThreadInvalidError(problem)
    thread = Thread(owner=owner, title=title, agent_name=agent_name)
    try:
        # No query here (the owner is a saved user; the database checks the key).
        thread.full_clean(exclude=["owner"], validate_unique=False)
    except ValidationError as exc:
        details = "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in exc.message_dict.items())
        raise ThreadInvalidError(details) from exc
    with transaction.atomic():
        # The user's thread quota, counted under the owner's lock.
        thread_admit(owner_id=owner.pk)
        thread.save(force_insert=True)
    return thread


def thread_delete(*, owner: User | AnonymousUser, thread_id: UUID | str) -> Thread:
    """Delete the owner's thread and every message in it, in one transaction.

    Another user's thread, a missing one and a malformed id all raise
    ``ThreadNotFound`` and delete nothing. Returns the deleted thread (its
    fields still readable, its primary key cleared by Django).
    """
    thread = thread_get_for_owner(owner=owner, thread_id=thread_id)
    with transaction.atomic():
        # Renders cascade with their messages; each message's remembered evidence leaves the
        # cache with it (a post_delete receiver in threads.signals), whichever path deletes it.
        thread.delete()
    return thread
