"""A Redis cache that costs one short timeout when Redis hangs, then steps aside.

Django's ``RedisCache`` with redis-py's defaults waits as long as the operating
system lets a socket wait, and each cache call of a request waits again (a hung
Redis added 10-20 s to every request). Here every socket operation has a short
timeout (``CACHE_TIMEOUT``, from ``CACHE_URL``'s entry in settings), nothing is
retried, and after a connection error or timeout this process skips Redis for
``CACHE_RETRY_AFTER`` seconds: each call then fails at once with redis-py's
``ConnectionError``, which the callers (``knowledgeweb.memo``, the rate limits,
``/readyz``) already treat as "no cache" and log.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)


class _Pause:
    """When this process may next try Redis, shared by its threads."""

    def __init__(self) -> None:
        self._until = 0.0
        self._lock = threading.Lock()

    def check(self) -> None:
        if time.monotonic() < self._until:
            raise RedisConnectionError("The cache failed recently; skipping it for now.")

    def trip(self, exc: BaseException) -> None:
        pause = float(getattr(settings, "CACHE_RETRY_AFTER", 5.0))
        with self._lock:
            opening = time.monotonic() >= self._until
            self._until = time.monotonic() + pause
        if opening:
            logger.warning(
                "Cache unreachable (%s): running without it for %.0f s before trying again",
                type(exc).__name__,
                pause,
            )


_PAUSES: dict[str, _Pause] = {}
_PAUSES_LOCK = threading.Lock()


def _pause_for(location: str) -> _Pause:
    with _PAUSES_LOCK:
        return _PAUSES.setdefault(location, _Pause())


class _ResilientClient(RedisCacheClient):
    def __init__(self, servers: list[str], **options: Any) -> None:
        # No retry: one timeout is all a request may lose to a hung cache.
        options.setdefault("retry", None)
        options.setdefault("retry_on_error", [])
        super().__init__(servers, **options)
        self.pause = _pause_for(",".join(servers))


def _guarded(name: str) -> Callable[..., Any]:
    base = getattr(RedisCacheClient, name)

    def method(self: _ResilientClient, *args: Any, **kwargs: Any) -> Any:
        self.pause.check()
        try:
            return base(self, *args, **kwargs)
        except (RedisConnectionError, RedisTimeoutError) as exc:
            self.pause.trip(exc)
            raise

    method.__name__ = name
    method.__doc__ = base.__doc__
    return method


for _name in (
    "add",
    "get",
    "set",
    "touch",
    "delete",
    "get_many",
    "has_key",
    "incr",
    "set_many",
    "delete_many",
    "clear",
):
    setattr(_ResilientClient, _name, _guarded(_name))


class ResilientRedisCache(RedisCache):
    """Django's ``RedisCache`` with short timeouts, no retries and a pause after failures."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = _ResilientClient
