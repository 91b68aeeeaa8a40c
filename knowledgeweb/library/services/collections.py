"""Writes for collections."""

from __future__ import annotations

from knowledgeweb.library.models import Collection


def collection_name_validate(*, name: str) -> None:
    """Raise ``ValidationError`` when no new collection could be called ``name``.

    Lets a caller refuse a bad name before it does any work, and create the
    collection only once it has something to put in it.
    """
    Collection(name=name.strip()).full_clean()


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
