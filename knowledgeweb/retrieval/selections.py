"""RAGFlow selections recently confirmed searchable, kept in Django's cache (docs/decisions/0010-ragflow-politeness-across-searches.md).

Keyed per binding, base URL, credential and selection (the credential only inside
a SHA-256 digest, never readable from the key); kept for
``KNOWLEDGEWEB_RAGFLOW_SELECTION_TTL`` seconds and shared between workers when
the cache is Redis. A cache that cannot be reached means validating again, never failing.
The retrieval service hands one to every adapter in its ``ProviderRequest``
(``providers/memory.py``); only an adapter that validates selections (RAGFlow) uses it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from redis.exceptions import RedisError

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.providers.selection import DatasetSelection

logger = logging.getLogger(__name__)

_PREFIX = "kw:ragflow-selection:"
_UNAVAILABLE = (RedisError, ConnectionError, TimeoutError)


def _now() -> float:
    """Wall-clock seconds: entries are shared between processes, so a monotonic clock would not do."""
    return time.time()


class CachedSelectionMemory:
    """A ``SelectionMemory`` for one binding and credential (building one reads nothing)."""

    def __init__(
        self,
        *,
        binding: KnowledgeBinding,
        api_key: str,
        ttl: float | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self._scope = [binding.pk, binding.base_url, hashlib.sha256(api_key.encode()).hexdigest()]
        self._ttl = settings.KNOWLEDGEWEB_RAGFLOW_SELECTION_TTL if ttl is None else ttl
        self._clock = clock if clock is not None else _now

    def recalls(self, selection: tuple[DatasetSelection, ...]) -> bool:
        if self._ttl <= 0:
            return False
        try:
            confirmed_at = cache.get(self._key(selection))
        except _UNAVAILABLE as exc:
            logger.warning(
                "Cache unavailable, validating the RAGFlow selection again: %s", type(exc).__name__
            )
            return False
        if not isinstance(confirmed_at, int | float):
            return False
        # The cache's own expiry is whole seconds; the clock decides exactly.
        return 0 <= self._clock() - confirmed_at < self._ttl

    def remember(self, selection: tuple[DatasetSelection, ...]) -> None:
        if self._ttl <= 0:
            return
        try:
            cache.set(self._key(selection), self._clock(), timeout=max(1, math.ceil(self._ttl)))
        except _UNAVAILABLE as exc:
            logger.warning("Cache unavailable, RAGFlow selection not kept: %s", type(exc).__name__)

    def _key(self, selection: tuple[DatasetSelection, ...]) -> str:
        parts = [*self._scope, [[item.dataset_id, list(item.document_ids)] for item in selection]]
        digest = hashlib.sha256(json.dumps(parts, separators=(",", ":")).encode()).hexdigest()
        return _PREFIX + digest
