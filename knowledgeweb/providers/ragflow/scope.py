"""RAGFlow retrieval scope: selected datasets, each whole or narrowed to documents."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

#: The application's own limit on selected documents, separate from RAGFlow's per-request limits.
MAX_SELECTED_DOCUMENTS = 1000

#: RAGFlow ids are hex UUIDs; anything outside this alphabet never reaches a URL path.
RESOURCE_ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,256}")


@dataclass(frozen=True)
class DatasetSelection:
    """One selected dataset; an empty ``document_ids`` means the whole dataset."""

    dataset_id: str
    document_ids: tuple[str, ...] = ()


def selected_document_count(selection: Iterable[DatasetSelection]) -> int:
    return sum(len(item.document_ids) for item in selection)


def selection_problems(selection: Iterable[DatasetSelection]) -> list[str]:
    """Everything wrong with a selection, as sentences; empty when it is valid."""
    items = list(selection)
    problems: list[str] = []
    if not items:
        problems.append("Select at least one dataset.")
    seen_datasets: set[str] = set()
    seen_documents: set[str] = set()
    for item in items:
        if not RESOURCE_ID_PATTERN.fullmatch(item.dataset_id):
            problems.append(f"{item.dataset_id!r} is not a valid RAGFlow dataset id.")
        if item.dataset_id in seen_datasets:
            problems.append(f"Dataset {item.dataset_id} is selected more than once.")
        seen_datasets.add(item.dataset_id)
        for document_id in item.document_ids:
            if not RESOURCE_ID_PATTERN.fullmatch(document_id):
                problems.append(f"{document_id!r} is not a valid RAGFlow document id.")
            if document_id in seen_documents:
                problems.append(f"Document {document_id} is selected more than once.")
            seen_documents.add(document_id)
    count = selected_document_count(items)
    if count > MAX_SELECTED_DOCUMENTS:
        problems.append(
            f"{count} documents are selected; at most {MAX_SELECTED_DOCUMENTS} documents may be selected."
        )
    return problems


class CheckedSelection(tuple[DatasetSelection, ...]):
    """A selection that has passed ``selection_problems`` once in this search.

    The retrieval service hands the adapter one of these so the same selection is
    not checked again; anything else reaching the adapter is checked there.
    """

    __slots__ = ()
