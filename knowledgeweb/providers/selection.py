"""A binding's stored selection, in the one shape every provider reads.

Stored as ``[{"dataset_id": ..., "document_ids": [...]}, ...]``: RAGFlow reads it as
datasets and documents, the local index as collection ids. What a provider
accepts is its own rule (its ``ProviderSpec.selection_problems``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DatasetSelection:
    """One selected dataset; an empty ``document_ids`` means the whole dataset."""

    dataset_id: str
    document_ids: tuple[str, ...] = ()


class CheckedSelection(tuple[DatasetSelection, ...]):
    """A selection that has passed its provider's rules once in this search.

    The retrieval service hands the adapter one of these so the same selection is
    not checked again; anything else reaching the adapter is checked there.
    """

    __slots__ = ()


def selection_from_json(value: Any) -> tuple[DatasetSelection, ...]:
    """Read a stored selection: ``[{"dataset_id": ..., "document_ids": [...]}, ...]``.

    Raises ``ValueError`` with a readable message for any other shape.
    """
    if not isinstance(value, list):
        raise ValueError("The selection must be a list of datasets.")
    selection: list[DatasetSelection] = []
    for item in value:
        if not isinstance(item, dict) or set(item) - {"dataset_id", "document_ids"}:
            raise ValueError('Each selected dataset must be {"dataset_id": ..., "document_ids": [...]}.')
        dataset_id, document_ids = item.get("dataset_id"), item.get("document_ids", [])
        if not isinstance(dataset_id, str):
            raise ValueError("Each selected dataset needs a dataset_id string.")
        if not isinstance(document_ids, list) or not all(isinstance(d, str) for d in document_ids):
            raise ValueError(f"The document ids of dataset {dataset_id} must be a list of strings.")
        selection.append(DatasetSelection(dataset_id=dataset_id, document_ids=tuple(document_ids)))
    return tuple(selection)


def selection_to_json(selection: Iterable[DatasetSelection]) -> list[dict[str, Any]]:
    return [{"dataset_id": s.dataset_id, "document_ids": list(s.document_ids)} for s in selection]
