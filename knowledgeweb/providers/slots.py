"""Process-wide request slots per provider origin (docs/decisions/0010-ragflow-politeness-across-searches.md).

A cap per search is no cap at all when searches run side by side: three searches
of four batches each put twelve requests in flight at one host. These slots are
shared by every search in the process, keyed by scheme, host and port, and a
request waits for one only until its search's deadline.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from knowledgeweb.providers.deadline import Deadline, DeadlinePassedError

_lock = threading.Lock()
_slots: dict[tuple[str, int], threading.BoundedSemaphore] = {}


class NoSlotInTimeError(Exception):
    """No slot came free before the deadline."""


def origin_of(base_url: str) -> str:
    """``scheme://host:port`` with the default port written out, lower-case."""
    url = httpx.URL(base_url)
    port = url.port or (443 if url.scheme == "https" else 80)
    return f"{url.scheme}://{url.host}:{port}"


def _semaphore(origin: str, limit: int) -> threading.BoundedSemaphore:
    with _lock:
        semaphore = _slots.get((origin, limit))
        if semaphore is None:
            semaphore = _slots[(origin, limit)] = threading.BoundedSemaphore(limit)
        return semaphore


@contextmanager
def request_slot(origin: str, limit: int, deadline: Deadline) -> Iterator[None]:
    """Hold one of ``limit`` slots for ``origin`` while the body runs; raise ``NoSlotInTimeError`` at the deadline."""
    semaphore = _semaphore(origin, limit)
    try:
        acquired = semaphore.acquire(timeout=deadline.bound(None))
    except DeadlinePassedError:
        acquired = False
    if not acquired:
        raise NoSlotInTimeError(origin)
    try:
        yield
    finally:
        semaphore.release()
