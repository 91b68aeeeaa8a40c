"""Where an adapter remembers selections it has already validated.

Validating 1000 selected RAGFlow documents takes 10 document checks; repeating the
same search within a short time would repeat them all. An adapter that validates
a selection asks a ``SelectionMemory`` first and tells it what it confirmed. The
memory lives above this layer (the retrieval service keeps it in Django's cache,
shared between workers, for a bounded time) and arrives with the
``ProviderRequest``; ``None`` means validate every time.
"""

from __future__ import annotations

from typing import Protocol

from knowledgeweb.providers.selection import DatasetSelection


class SelectionMemory(Protocol):
    """Selections whose every document the provider recently confirmed searchable, for one binding."""

    def recalls(self, selection: tuple[DatasetSelection, ...]) -> bool:
        """Whether ``selection`` was confirmed recently enough to be searched without a new check."""

    def remember(self, selection: tuple[DatasetSelection, ...]) -> None:
        """Note that every document of ``selection`` was just confirmed."""
