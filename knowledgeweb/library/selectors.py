"""Reads for the local index."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Count, QuerySet

from knowledgeweb.bindings.choices import BindingProvider, BindingScope, BindingTool
from knowledgeweb.bindings.rules import binding_problems, local_collection_ids
from knowledgeweb.bindings.selectors import binding_list_for_user
from knowledgeweb.library.models import Chunk, Collection, Document
from knowledgeweb.library.search import ChunkHit, search_chunks


def chunk_search(*, query: str, limit: int, collection_names: Sequence[str] | None = None) -> list[ChunkHit]:
    """Ranked full-text hits for ``query``, best first (SQLite FTS5 or PostgreSQL)."""
    return search_chunks(query, limit=limit, collection_names=collection_names)


def collection_by_name(*, name: str) -> Collection | None:
    return Collection.objects.filter(name=name).first()


def collection_names_for_ids(*, ids: Iterable[int]) -> list[str]:
    """The names of the collections among ``ids`` that exist, in name order."""
    return list(Collection.objects.filter(pk__in=list(ids)).order_by("name").values_list("name", flat=True))


def collections_for_user(user: User | AnonymousUser) -> set[int]:
    """Ids of the collections ``user`` may read: those their usable local bindings serve.

    A local binding serves every collection (scope 'all') or the ones it selects; a
    disabled binding, a disabled scope, a binding without ``knowledge_search`` and a
    binding that fails its rules serve none. The document view opens a collection's
    documents only to a user whose set holds it (docs/decisions.md, "Access").
    """
    served: set[int] = set()
    every = False
    for binding in binding_list_for_user(user=user).filter(provider=BindingProvider.LOCAL):
        if binding.scope == BindingScope.DISABLED or binding_problems(**binding.rule_fields()):
            continue
        if not isinstance(binding.tools, list) or BindingTool.KNOWLEDGE_SEARCH not in binding.tools:
            continue
        if binding.scope == BindingScope.ALL:
            every = True
            break
        served |= local_collection_ids(binding.selection) or frozenset()
    existing = Collection.objects.all() if every else Collection.objects.filter(pk__in=served)
    return set(existing.values_list("pk", flat=True))


def collection_list() -> QuerySet[Collection]:
    """Collections with ``document_count`` annotated."""
    return Collection.objects.annotate(document_count=Count("documents")).order_by("name")


def document_list(*, collection: Collection) -> QuerySet[Document]:
    return Document.objects.filter(collection=collection).order_by("title", "id")


def document_chunks(*, document: Document) -> QuerySet[Chunk]:
    return Chunk.objects.filter(document=document).order_by("ordinal")
