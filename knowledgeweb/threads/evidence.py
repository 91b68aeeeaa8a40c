"""The one place that validates tool messages into evidence (SPEC §3.3, §10).

Validation is memoized per immutable message in Django's cache, keyed by the
message id and content digest, so a shared cache (Redis) serves every worker
and a second render of a thread validates nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from django.core.cache import cache

from knowledgeweb.knowledge import Citation, Evidence, read_sources
from knowledgeweb.threads.models import Message, MessageType

# Bump when the reader's rules change, so stale validations are never served.
EVIDENCE_CACHE_VERSION = 1
_MISSING = object()

ResolvedState = Literal["resolved", "unresolved", "malformed"]

REASON_MALFORMED = "The link looks like a knowledge citation but is not in an accepted form."
REASON_UNRESOLVED = "No earlier tool message in this thread holds valid evidence for this citation."


class ValidationCounter:
    """Counts validations actually run (cache misses); tests and benchmarks read it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0

    @property
    def count(self) -> int:
        return self._count

    def increment(self) -> None:
        with self._lock:
            self._count += 1

    def reset(self) -> None:
        with self._lock:
            self._count = 0


validation_counter = ValidationCounter()


@dataclass(frozen=True, slots=True)
class ResolvedCitation:
    """A citation with its verdict. ``source`` is set only when ``state`` is resolved."""

    label: str
    href: str
    state: ResolvedState
    source: Evidence | None
    reason: str


def evidence_cache_key(message: Message) -> str:
    return f"knowledgeweb:evidence:v{EVIDENCE_CACHE_VERSION}:{message.id}:{message.digest}"


def message_sources(message: Message) -> dict[str, Evidence]:
    """The valid sources of one message, keyed by handle; empty for anything but a tool message."""
    if message.type != MessageType.TOOL:
        return {}
    key = evidence_cache_key(message)
    cached = cache.get(key, _MISSING)
    if isinstance(cached, dict):
        return cached
    sources = read_sources(message.name, message.content, message.artifact)
    validation_counter.increment()
    # Messages never change, so neither does what they prove.
    cache.set(key, sources, timeout=None)
    return sources


def evidence_before(messages: Sequence[Message]) -> Iterator[tuple[Message, Mapping[str, Evidence]]]:
    """Yield each message with the evidence of the tool messages before it.

    The first source to claim a handle keeps it; a later one never replaces it.
    The mapping yielded is read-only and stays valid after the walk moves on.
    """
    available: dict[str, Evidence] = {}
    snapshot: Mapping[str, Evidence] = MappingProxyType({})
    for message in messages:
        yield message, snapshot
        added = False
        for handle, source in message_sources(message).items():
            if handle not in available:
                available[handle] = source
                added = True
        if added:
            snapshot = MappingProxyType(dict(available))


def resolve_citation(citation: Citation, available: Mapping[str, Evidence]) -> ResolvedCitation:
    """Resolve one citation against the evidence available before its message."""
    if citation.state == "malformed" or citation.handle is None:
        return ResolvedCitation(citation.label, citation.href, "malformed", None, REASON_MALFORMED)
    source = available.get(citation.handle)
    if source is None:
        return ResolvedCitation(citation.label, citation.href, "unresolved", None, REASON_UNRESOLVED)
    return ResolvedCitation(citation.label, citation.href, "resolved", source, "")
