"""Memoization through Django's cache that degrades instead of failing.

Validations and rendered fragments are pure functions of immutable messages, so
the cache only saves work: when a shared cache (Redis) is unreachable, a page is
computed afresh and the outage is logged, rather than every page answering 500.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from django.conf import settings
from django.core.cache import cache
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

# What a cache backend raises when its server is away; local memory raises nothing.
_UNAVAILABLE = (RedisError, ConnectionError, TimeoutError)


def memo_get_many(keys: Iterable[str]) -> dict[str, Any]:
    """The cached values among ``keys``; nothing when the cache cannot be reached."""
    keys = list(keys)
    if not keys:
        return {}
    try:
        return cache.get_many(keys)
    except _UNAVAILABLE as exc:
        logger.warning("Cache unavailable, computing %d entries afresh: %s", len(keys), type(exc).__name__)
        return {}


def memo_ttl() -> int:
    """Seconds an entry is kept (``KNOWLEDGEWEB_CACHE_TTL``): entries describe immutable messages,
    but a deleted message's entry must not outlive it for good should a deletion miss it."""
    return int(settings.KNOWLEDGEWEB_CACHE_TTL)


def memo_set_many(values: Mapping[str, Any]) -> None:
    """Keep ``values`` for ``memo_ttl()`` seconds; skip when the cache is away."""
    if not values:
        return
    try:
        cache.set_many(dict(values), timeout=memo_ttl())
    except _UNAVAILABLE as exc:
        logger.warning("Cache unavailable, %d entries not kept: %s", len(values), type(exc).__name__)


def memo_delete_many(keys: Iterable[str]) -> None:
    """Forget ``keys`` (their messages are gone); when the cache is away, their TTL ends them."""
    keys = list(keys)
    if not keys:
        return
    try:
        cache.delete_many(keys)
    except _UNAVAILABLE as exc:
        logger.warning("Cache unavailable, %d entries left to expire: %s", len(keys), type(exc).__name__)
