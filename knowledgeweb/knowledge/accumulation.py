"""Accumulating validated sources over a growing message list (docs/contract.md#delegation-and-accumulation)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from knowledgeweb.knowledge.bounds import MAX_RECORDS
from knowledgeweb.knowledge.reading import read_sources
from knowledgeweb.knowledge.types import Evidence


def _field(message: object, key: str) -> Any:
    if isinstance(message, Mapping):
        return message.get(key)
    return getattr(message, key, None)


def _fingerprint(message: object) -> str:
    if message is None:
        return ""
    payload = json.dumps(
        [
            _field(message, "type"),
            _field(message, "name"),
            _field(message, "content"),
            _field(message, "artifact"),
        ],
        sort_keys=True,
        default=str,
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class SourceAccumulator:
    """Follows successive snapshots of a message list and keeps its validated sources.

    Messages are dicts or objects with ``type``, ``name``, ``content`` and
    ``artifact``; ``None`` is an empty message. Each ``update`` validates only
    the suffix that changed since the previous snapshot: when an earlier
    message changed (after compaction, say), it restarts from that message.

    Sources survive compaction: once a source has been validated it stays,
    even when the message that carried it is later summarised away, because
    the model really saw that evidence. At most ``max_sources`` sources are
    kept, the earliest first; when an id repeats, the first record wins.
    """

    def __init__(self, *, max_sources: int = MAX_RECORDS) -> None:
        self.max_sources = max_sources
        self.validated = 0
        self._messages: list[object] = []
        self._fingerprints: list[str] = []
        self._sources: dict[str, Evidence] = {}

    def update(self, messages: Sequence[object | None]) -> dict[str, Evidence]:
        start = self._first_change(messages)
        del self._messages[start:], self._fingerprints[start:]
        for message in messages[start:]:
            self._messages.append(message)
            self._fingerprints.append(_fingerprint(message))
            for handle, evidence in self._validate(message).items():
                if len(self._sources) < self.max_sources:
                    self._sources.setdefault(handle, evidence)
        return self.sources

    @property
    def sources(self) -> dict[str, Evidence]:
        return dict(self._sources)

    def _first_change(self, messages: Sequence[object | None]) -> int:
        for index, previous in enumerate(self._messages):
            if index >= len(messages):
                return index
            current = messages[index]
            # Identity is the cheap common case; equal content in a new object is unchanged too.
            if current is not previous and _fingerprint(current) != self._fingerprints[index]:
                return index
        return len(self._messages)

    def _validate(self, message: object | None) -> dict[str, Evidence]:
        if message is None or _field(message, "type") != "tool":
            return {}
        self.validated += 1
        return read_sources(_field(message, "name"), _field(message, "content"), _field(message, "artifact"))
