"""The app's resilient Redis cache, counting the calls made to it (bench/cache_outage.py).

A bench that measures what a hung cache adds to a request must first show that the request
calls the cache at all; a route that stopped touching it would measure nothing and look fine.
"""

from __future__ import annotations

from typing import Any, ClassVar

from knowledgeweb.ops.cache import ResilientRedisCache

COUNTED = ("add", "get", "set", "touch", "delete", "get_many", "has_key", "incr", "set_many", "delete_many")


class CountingRedisCache(ResilientRedisCache):
    """Counts every call, answered or failed, in ``CountingRedisCache.calls``."""

    calls: ClassVar[int] = 0

    def __getattribute__(self, name: str) -> Any:
        if name in COUNTED:
            type(self).calls += 1
        return super().__getattribute__(name)
