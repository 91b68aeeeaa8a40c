"""Rate limits counted in Django's cache, so every worker of every process shares them.

A fixed window per scope and key: ``RATE_LIMITS[scope] = (limit, seconds)``. The
counter lives under ``rl:<namespace>:<scope>:<sha256(key)>:<window>`` and expires
with its window; Redis's INCR is atomic, so two workers never both take the last
slot. When the cache cannot be reached the limit is not enforced (fail open) and
the outage is logged: refusing every search and sign-in because Redis is down would
turn a cache outage into a full one.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

_UNAVAILABLE = (RedisError, ConnectionError, TimeoutError, OSError)


class RateLimited(Exception):  # noqa: N818 - reads as the outcome: ratelimit.RateLimited
    """A request over its limit; ``retry_after`` whole seconds until the window ends."""

    def __init__(self, scope: str, retry_after: int) -> None:
        self.scope = scope
        self.retry_after = retry_after
        super().__init__(f"Too many requests ({scope}); retry after {retry_after} s.")

    @property
    def detail(self) -> str:
        what = {
            "search": "Too many searches with this token",
            "ask": "Too many questions",
            "token_failure": "Too many failed token checks from your address",
            "login_failure": "Too many failed sign-ins from your address",
        }.get(self.scope, "Too many requests")
        return f"{what}: try again in {self.retry_after} s."


@dataclass(frozen=True)
class _Window:
    key: str
    limit: int
    seconds: int
    retry_after: int


def _window(scope: str, key: str) -> _Window | None:
    rate = settings.RATE_LIMITS.get(scope)
    if rate is None:
        return None
    limit, seconds = rate
    now = time.time()
    index = int(now // seconds)
    digest = hashlib.sha256(key.encode()).hexdigest()[:32]
    namespace = settings.RATE_LIMIT_NAMESPACE
    retry_after = max(1, math.ceil((index + 1) * seconds - now))
    return _Window(f"{namespace}:{scope}:{digest}:{index}", limit, seconds, retry_after)


def _count(window: _Window) -> int:
    # add() makes the key expire with its window; incr() is atomic on Redis.
    cache.add(window.key, 0, timeout=window.seconds + 1)
    try:
        return int(cache.incr(window.key))
    except ValueError:  # expired between the two calls
        cache.set(window.key, 1, timeout=window.seconds + 1)
        return 1


def consume(scope: str, key: str) -> None:
    """Count one request against ``key``'s limit; raise ``RateLimited`` past it."""
    window = _window(scope, key)
    if window is None:
        return
    try:
        used = _count(window)
    except _UNAVAILABLE as exc:
        logger.warning("Rate limit %r not enforced: the cache is unavailable (%s)", scope, type(exc).__name__)
        return
    if used > window.limit:
        raise RateLimited(scope, window.retry_after)


def check(scope: str, key: str) -> None:
    """Raise ``RateLimited`` when ``key`` has used its limit, without counting anything."""
    window = _window(scope, key)
    if window is None:
        return
    try:
        used = cache.get(window.key) or 0
    except _UNAVAILABLE as exc:
        logger.warning("Rate limit %r not checked: the cache is unavailable (%s)", scope, type(exc).__name__)
        return
    if int(used) >= window.limit:
        raise RateLimited(scope, window.retry_after)


def record(scope: str, key: str) -> None:
    """Count one event (a failure) against ``key`` without refusing this request."""
    window = _window(scope, key)
    if window is None:
        return
    try:
        _count(window)
    except _UNAVAILABLE as exc:
        logger.warning("Rate limit %r not counted: the cache is unavailable (%s)", scope, type(exc).__name__)
