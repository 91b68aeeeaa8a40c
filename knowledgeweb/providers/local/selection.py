"""The local index's name and a local binding's selection: whole collections, by id.

The index itself is the library app, above this layer: its spec
(``library/provider_spec.py``) is registered from the app's ``ready()``. The rules
of its selection are pure and stay here, below the bindings that apply them.
"""

from __future__ import annotations

import re
from typing import Any

from knowledgeweb.providers.selection import DatasetSelection, selection_from_json

#: The value stored in ``KnowledgeBinding.provider`` for the local index.
NAME = "local"

#: A local collection's primary key, as stored in a local binding's selection.
LOCAL_COLLECTION_ID = re.compile(r"[1-9][0-9]{0,18}")


def local_selection_problems(items: tuple[DatasetSelection, ...]) -> list[str]:
    """A local binding selects whole collections by id: ``[{"dataset_id": "<collection id>"}, ...]``.

    Ids, not names: renaming a collection keeps its readers, and a collection deleted
    and created again under the same name is not opened to the old binding's users.
    """
    if not items:
        return ["Select at least one collection."]
    problems: list[str] = []
    seen: set[str] = set()
    for item in items:
        if not LOCAL_COLLECTION_ID.fullmatch(item.dataset_id):
            problems.append(f"{item.dataset_id[:40]!r} is not a collection id.")
        elif item.dataset_id in seen:
            problems.append(f"Collection {item.dataset_id} is selected more than once.")
        if item.document_ids:
            problems.append("The local index selects whole collections, not single documents.")
        seen.add(item.dataset_id)
    return problems


def local_collection_ids(selection: Any) -> frozenset[int] | None:
    """The collection ids a local binding's stored selection names (``None``: unreadable)."""
    try:
        items = selection_from_json(selection)
    except ValueError:
        return None
    if local_selection_problems(items):
        return None
    return frozenset(int(item.dataset_id) for item in items)
