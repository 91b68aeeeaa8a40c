"""Writes for collections."""

from __future__ import annotations

from knowledgeweb.library.models import Collection


def collection_get_or_create(*, name: str) -> Collection:
    """The collection called ``name`` (surrounding spaces ignored), created when missing."""
    name = name.strip()
    existing = Collection.objects.filter(name=name).first()
    if existing is not None:
        return existing
    collection = Collection(name=name)
    collection.full_clean()
    collection.save()
    return collection
