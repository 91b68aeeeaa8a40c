"""Where a RAGFlow adapter remembers selections it has already validated.

Validating 1000 selected documents takes 10 document checks; repeating the same
search within a short time would repeat them all. The adapter asks a
``SelectionMemory`` first and tells it what it confirmed. The memory lives
outside this package (the retrieval service keeps it in Django's cache, shared
between workers, for a bounded time); ``None`` means validate every time.
"""

from __future__ import annotations

from typing import Protocol

from knowledgeweb.providers.ragflow.scope import DatasetSelection


class SelectionMemory(Protocol):
    """Selections whose every document RAGFlow recently confirmed searchable, for one binding."""

    def recalls(self, selection: tuple[DatasetSelection, ...]) -> bool:
        """Whether ``selection`` was confirmed recently enough to be searched without a new check."""

    def remember(self, selection: tuple[DatasetSelection, ...]) -> None:
        """Note that every document of ``selection`` was just confirmed."""
