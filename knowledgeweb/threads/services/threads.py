"""Creating and deleting threads."""

from __future__ import annotations

import random
import time
from uuid import UUID

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import ValidationError
from django.db import OperationalError, connection, transaction

from knowledgeweb.threads.errors import ThreadInvalidError
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.quotas import thread_admit
from knowledgeweb.threads.selectors import thread_get_for_owner
from knowledgeweb.threads.text import unstorable_field

_MAX_ATTEMPTS = 40


def thread_create(*, owner: User, title: str, agent_name: str = "") -> Thread:
    """Create an empty thread owned by ``owner``."""
    problem = unstorable_field({"title": title, "agent_name": agent_name})
    if problem is not None:
        raise ThreadInvalidError(problem)
    thread = Thread(owner=owner, title=title, agent_name=agent_name)
    try:
        # No query here (the owner is a saved user; the database checks the key): racing writers
        # retry below, and a read here could not.
        thread.full_clean(exclude=["owner"], validate_unique=False)
    except ValidationError as exc:
        details = "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in exc.message_dict.items())
        raise ThreadInvalidError(details) from exc
    for attempt in range(1, _MAX_ATTEMPTS + 1):
        try:
            with transaction.atomic():
                # The user's thread quota, counted under the owner's lock.
                thread_admit(owner_id=owner.pk)
                thread.save(force_insert=True)
            return thread
        except OperationalError as exc:
            thread._state.adding = True
            # SQLite refuses a second writer that read first ("database is locked"): start again.
            if attempt == _MAX_ATTEMPTS or connection.in_atomic_block or "locked" not in str(exc):
                raise
            time.sleep(random.uniform(0, min(0.05, 0.005 * attempt)))  # noqa: S311
    raise AssertionError("unreachable")  # pragma: no cover


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
