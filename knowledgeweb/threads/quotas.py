"""Quotas: how much one thread and one user may store, checked on every write.

Every write path (the API's append and import, ``import_thread``, Ask, retrieval's
tool messages, and any later one) goes through ``message_append`` or
``thread_import``, and both admit their writes here, inside their transaction
(an import is also checked from its count and size before it renders anything,
``import_precheck``, so an import no quota admits is refused cheaply):

1. the owner's user row is locked, then the thread row (always in that order, so
   two writers never deadlock); on PostgreSQL this serializes one user's writes,
   and on SQLite every transaction already began holding the database's single
   write lock (``transaction_mode = "IMMEDIATE"`` in settings);
2. the thread's tallies (``Thread.message_count``, ``Thread.content_bytes``) and the
   owner's totals are read under those locks, and a write that would pass a quota
   raises ``QuotaExceededError`` before anything is written;
3. the writer then adds what it wrote to the tallies (``tallies_add``).

Sizes are the UTF-8 bytes of a message's content plus its artifact's canonical JSON.
The limits come from settings (``QUOTA_*``, read from ``KNOWLEDGEWEB_QUOTA_*``). A
refusal is a 413 on every path (docs/decisions/0005-quotas.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import F, Sum
from django.utils import timezone

from knowledgeweb.threads.errors import QuotaExceededError, ThreadNotFound
from knowledgeweb.threads.models import Thread


@dataclass(frozen=True, slots=True)
class Quotas:
    thread_messages: int
    thread_bytes: int
    user_threads: int
    user_bytes: int


def quotas() -> Quotas:
    """The configured limits (read at each call, so a settings override applies at once)."""
    return Quotas(
        thread_messages=settings.QUOTA_THREAD_MESSAGES,
        thread_bytes=settings.QUOTA_THREAD_BYTES,
        user_threads=settings.QUOTA_USER_THREADS,
        user_bytes=settings.QUOTA_USER_BYTES,
    )


def message_size(*, content: str, artifact: Any, tool_calls: Any = None, parts: Any = None) -> int:
    """UTF-8 bytes of ``content`` plus the canonical JSON of ``artifact``, ``tool_calls`` and
    ``parts`` (0 for each that is absent or empty): whatever a message stores counts, so a large
    thinking part or tool call cannot slip past the byte quotas."""
    size = len(content.encode("utf-8"))
    for value in (artifact, tool_calls or None, parts or None):
        if value is not None:
            canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
            size += len(canonical.encode("utf-8"))
    return size


def thread_admit(*, owner_id: int) -> None:
    """Lock the owner and refuse a new thread past the user's thread quota. Call inside a transaction."""
    _lock_owner(owner_id)
    limits = quotas()
    owned = Thread.objects.filter(owner_id=owner_id).count()
    if owned + 1 > limits.user_threads:
        raise _refusal(
            "user_threads",
            f"you already own {owned} threads; the limit is {limits.user_threads}",
        )


def messages_admit(*, thread: Thread, count: int, nbytes: int) -> None:
    """Lock the owner and the thread, and refuse ``count`` messages of ``nbytes`` past any quota.

    Raises ``ThreadNotFound`` when the thread is gone. Call inside a transaction, before writing.
    """
    _lock_owner(thread.owner_id)
    row = (
        Thread.objects.select_for_update()
        .filter(pk=thread.pk)
        .values_list("message_count", "content_bytes")
        .first()
    )
    if row is None:
        raise ThreadNotFound("Thread not found.")
    _check(thread, row[0], row[1], count=count, nbytes=nbytes)


def quota_precheck(*, owner_id: int, thread: Thread | None = None, new_thread: bool = False) -> None:
    """Refuse, without locking, what is already sure to fail: a full thread, a full user.

    For paths that do slow work before they write (a provider search): the request is
    not sent at all. The write itself is still admitted under the locks.
    """
    limits = quotas()
    if new_thread:
        owned = Thread.objects.filter(owner_id=owner_id).count()
        if owned + 1 > limits.user_threads:
            raise _refusal(
                "user_threads", f"you already own {owned} threads; the limit is {limits.user_threads}"
            )
    if thread is not None:
        row = Thread.objects.filter(pk=thread.pk).values_list("message_count", "content_bytes").first()
        if row is None:
            raise ThreadNotFound("Thread not found.")
        _check(thread, row[0], row[1], count=1, nbytes=1)
    elif _user_bytes(owner_id) + 1 > limits.user_bytes:
        raise _refusal(
            "user_bytes",
            f"your threads already hold {_user_bytes(owner_id)} bytes; the limit is {limits.user_bytes} bytes",
        )


def import_precheck(*, owner_id: int, count: int, nbytes: int = 0) -> None:
    """Refuse, without locking, an import of ``count`` messages and ``nbytes`` into a new thread
    that no quota could admit: called before the import renders anything, so a refused import
    costs a count and a sum, not a render of every message. The write is still admitted under
    the locks (``thread_admit``, ``messages_admit``)."""
    limits = quotas()
    if count > limits.thread_messages:
        raise _refusal(
            "thread_messages",
            f"the import holds {count} messages; the limit is {limits.thread_messages}",
        )
    if nbytes > limits.thread_bytes:
        raise _refusal(
            "thread_bytes", f"the import holds {nbytes} bytes; the limit is {limits.thread_bytes} bytes"
        )
    owned = Thread.objects.filter(owner_id=owner_id).count()
    if owned + 1 > limits.user_threads:
        raise _refusal("user_threads", f"you already own {owned} threads; the limit is {limits.user_threads}")
    total = _user_bytes(owner_id)
    if total + nbytes > limits.user_bytes:
        raise _refusal(
            "user_bytes",
            f"your threads hold {total} bytes and would hold {total + nbytes}; "
            f"the limit is {limits.user_bytes} bytes",
        )


def tallies_add(*, thread: Thread, count: int, nbytes: int) -> None:
    """Add what was just written to the thread's tallies (and touch ``updated_at``)."""
    Thread.objects.filter(pk=thread.pk).update(
        message_count=F("message_count") + count,
        content_bytes=F("content_bytes") + nbytes,
        updated_at=timezone.now(),
    )


def _check(thread: Thread, messages: int, stored: int, *, count: int, nbytes: int) -> None:
    limits = quotas()
    if messages + count > limits.thread_messages:
        raise _refusal(
            "thread_messages",
            f"the thread holds {messages} messages and would hold {messages + count}; "
            f"the limit is {limits.thread_messages}",
        )
    if stored + nbytes > limits.thread_bytes:
        raise _refusal(
            "thread_bytes",
            f"the thread holds {stored} bytes and would hold {stored + nbytes}; "
            f"the limit is {limits.thread_bytes} bytes",
        )
    total = _user_bytes(thread.owner_id)
    if total + nbytes > limits.user_bytes:
        raise _refusal(
            "user_bytes",
            f"your threads hold {total} bytes and would hold {total + nbytes}; "
            f"the limit is {limits.user_bytes} bytes",
        )


def _user_bytes(owner_id: int) -> int:
    total = Thread.objects.filter(owner_id=owner_id).aggregate(total=Sum("content_bytes"))["total"]
    return int(total or 0)


def _lock_owner(owner_id: int) -> None:
    # The user row is the one lock every write of this user's threads shares. SQLite has no
    # row locks (select_for_update is a no-op there): its transactions begin holding the
    # database's write lock instead (settings.DATABASES' transaction_mode = "IMMEDIATE").
    model = get_user_model()
    list(model.objects.filter(pk=owner_id).select_for_update().values_list("pk", flat=True))


_SETTING = {
    "thread_messages": "KNOWLEDGEWEB_QUOTA_THREAD_MESSAGES",
    "thread_bytes": "KNOWLEDGEWEB_QUOTA_THREAD_BYTES",
    "user_threads": "KNOWLEDGEWEB_QUOTA_USER_THREADS",
    "user_bytes": "KNOWLEDGEWEB_QUOTA_USER_BYTES",
}
_WHAT = {
    "thread_messages": "Thread message quota exceeded",
    "thread_bytes": "Thread size quota exceeded",
    "user_threads": "Thread count quota exceeded",
    "user_bytes": "Storage quota exceeded",
}


def _refusal(quota: str, detail: str) -> QuotaExceededError:
    return QuotaExceededError(
        f"{_WHAT[quota]}: {detail} ({_SETTING[quota]}). Nothing was written.", quota=quota
    )
