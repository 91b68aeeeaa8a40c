"""Creating threads."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from knowledgeweb.threads.errors import ThreadInvalidError
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.text import unstorable_field


def thread_create(*, owner: User, title: str, agent_name: str = "") -> Thread:
    """Create an empty thread owned by ``owner``."""
    problem = unstorable_field({"title": title, "agent_name": agent_name})
    if problem is not None:
        raise ThreadInvalidError(problem)
    thread = Thread(owner=owner, title=title, agent_name=agent_name)
    try:
        thread.full_clean()
    except ValidationError as exc:
        details = "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in exc.message_dict.items())
        raise ThreadInvalidError(details) from exc
    thread.save()
    return thread
