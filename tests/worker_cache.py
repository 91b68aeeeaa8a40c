"""The suite's Redis cache when pytest-xdist runs several workers against one Redis database.

Django's ``RedisCache.clear()`` empties the whole database (FLUSHDB), and tests clear the cache
to count what a page recomputes; on a database shared by two workers, one worker's clear would
wipe the other's entries in the middle of a test. Each worker keeps its keys under its own
prefix (tests/settings.py) and clears only those, through the app's resilient client.
"""

from __future__ import annotations

from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from knowledgeweb.ops.cache import ResilientRedisCache


class WorkerRedisCache(ResilientRedisCache):
    """The app's Redis cache, emptying only this worker's keys."""

    def clear(self) -> None:
        resilient: Any = self._cache  # type: ignore[attr-defined]  # Django's client, untyped in the stubs
        resilient.pause.check()
        try:
            client = resilient.get_client(None, write=True)
            # make_key() spells every key "<KEY_PREFIX>:<version>:<key>".
            keys = list(client.scan_iter(match=f"{self.key_prefix}:*", count=1000))
            if keys:
                client.delete(*keys)
        except (RedisConnectionError, RedisTimeoutError) as exc:
            resilient.pause.trip(exc)
            raise
