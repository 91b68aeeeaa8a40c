"""Rate limits counted in Django's cache, so every worker of every process shares them.

A sliding window per scope and key: ``RATE_LIMITS[scope] = (limit, seconds)``. Counts are
kept per fixed window under ``rl:<namespace>:<scope>:<sha256(key)>:<window>`` and expire
one window after it ends; what a request is held to is the current window's count plus
the previous window's, weighted by how much of the previous window still lies within
the last ``seconds`` (the estimate Cloudflare and nginx use). So a burst that straddles
a window boundary is counted as one burst: ten wrong passwords just before a minute
ends leave almost no room just after it. Redis's INCR is atomic, so two workers never
both take the last slot; a refused request gives its slot back, so a client that retries
too early does not push its own wait further out. When the cache cannot be reached the
limit is not enforced (fail open) and the outage is logged: refusing every search and
sign-in because Redis is down would turn a cache outage into a full one.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from redis.exceptions import RedisError

from knowledgeweb.errors import DomainError

logger = logging.getLogger(__name__)

_UNAVAILABLE = (RedisError, ConnectionError, TimeoutError, OSError)


class RateLimited(DomainError):  # noqa: N818 - reads as the outcome: ratelimit.RateLimited
    """A request over its limit; ``retry_after`` whole seconds until the window ends.

    A domain error like any other (429, ``rate_limited``, with ``Retry-After``), so every
    surface answers it through the one error model.
    """

    code = "rate_limited"
    status = 429

    def __init__(self, scope: str, retry_after: int) -> None:
        self.scope = scope
        self.retry_after = retry_after
        super().__init__(self.detail)

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)}

    @property
    def detail(self) -> str:
        what = {
            "search": "Too many searches with this token",
            "ask": "Too many questions",
            "write": "Too many writes with this token",
            "token_failure": "Too many failed token checks from your address",
            "login_failure": "Too many failed sign-ins from your address",
        }.get(self.scope, "Too many requests")
        return f"{what}: try again in {self.retry_after} s."


#: The limiter's clock, seconds since the epoch (tests move it instead of sleeping).
clock: Callable[[], float] = time.time


@dataclass(frozen=True)
class _Window:
    current: str
    previous: str
    limit: int
    seconds: int
    #: The share of the current window already gone, in [0, 1).
    elapsed: float

    def estimate(self, current: int, previous: int) -> float:
        """Events in the last ``seconds``: the previous window's spread evenly over it."""
        return current + previous * (1 - self.elapsed)

    def retry_after(self, current: int, previous: int) -> int:
        """Whole seconds until one more event fits, if nothing else is counted meanwhile."""
        room = self.limit - 1  # the estimate may be at most this before an event is allowed
        remaining = self.seconds * (1 - self.elapsed)
        if current <= room:
            # Within this window, as the previous one's weight fades.
            wait = self.seconds * (1 - self.elapsed - (room - current) / previous) if previous else 0.0
        else:
            # In the next window, as this one's weight fades in turn.
            wait = remaining + self.seconds * (1 - room / current)
        # Rounded first: 60 * (1 - 2/3) must be 20 s, not 21.
        return max(1, math.ceil(round(wait, 6)))


def _window(scope: str, key: str) -> _Window | None:
    rate = settings.RATE_LIMITS.get(scope)
    if rate is None:
        return None
    limit, seconds = rate
    now = clock()
    index = int(now // seconds)
    digest = hashlib.sha256(key.encode()).hexdigest()[:32]
    prefix = f"{settings.RATE_LIMIT_NAMESPACE}:{scope}:{digest}"
    elapsed = now / seconds - index
    return _Window(f"{prefix}:{index}", f"{prefix}:{index - 1}", limit, seconds, elapsed)


def _count(window: _Window) -> int:
    # add() makes the key expire once it can no longer be the previous window; incr() is
    # atomic on Redis.
    timeout = 2 * window.seconds + 1
    cache.add(window.current, 0, timeout=timeout)
    try:
        return int(cache.incr(window.current))
    except ValueError:  # expired between the two calls
        cache.set(window.current, 1, timeout=timeout)
        return 1


def _counts(window: _Window) -> tuple[int, int]:
    found = cache.get_many([window.current, window.previous])
    return int(found.get(window.current) or 0), int(found.get(window.previous) or 0)


def consume(scope: str, key: str) -> None:
    """Count one request against ``key``'s limit; raise ``RateLimited`` past it (uncounted)."""
    window = _window(scope, key)
    if window is None:
        return
    try:
        used = _count(window)
        previous = int(cache.get(window.previous) or 0)
        if window.estimate(used, previous) > window.limit:
            # A refusal takes no slot (unless the count expired meanwhile: nothing to give back).
            with contextlib.suppress(ValueError):
                cache.decr(window.current)
            raise RateLimited(scope, window.retry_after(used - 1, previous))
    except _UNAVAILABLE as exc:
        logger.warning("Rate limit %r not enforced: the cache is unavailable (%s)", scope, type(exc).__name__)


def check(scope: str, key: str) -> None:
    """Raise ``RateLimited`` when ``key`` has used its limit, without counting anything."""
    window = _window(scope, key)
    if window is None:
        return
    try:
        current, previous = _counts(window)
    except _UNAVAILABLE as exc:
        logger.warning("Rate limit %r not checked: the cache is unavailable (%s)", scope, type(exc).__name__)
        return
    if window.estimate(current, previous) + 1 > window.limit:
        raise RateLimited(scope, window.retry_after(current, previous))


def record(scope: str, key: str) -> None:
    """Count one event (a failure) against ``key`` without refusing this request."""
    window = _window(scope, key)
    if window is None:
        return
    try:
        _count(window)
    except _UNAVAILABLE as exc:
        logger.warning("Rate limit %r not counted: the cache is unavailable (%s)", scope, type(exc).__name__)
