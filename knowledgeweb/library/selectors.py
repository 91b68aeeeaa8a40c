"""Reads for the local index."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Count, Max, QuerySet

from knowledgeweb.bindings.choices import BindingScope, BindingTool
from knowledgeweb.bindings.selectors import binding_list_usable
from knowledgeweb.library.models import MAX_COLLECTION_NAME, Chunk, Collection, Document
from knowledgeweb.library.passages import is_digest, text_digest
from knowledgeweb.library.search import ChunkHit, search_chunks
from knowledgeweb.providers.local.selection import NAME as LOCAL_PROVIDER
from knowledgeweb.providers.local.selection import local_collection_ids


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
    documents only to a user whose set holds it (docs/decisions/0006-per-collection-access-for-the-local-index.md).
    """
    served: set[int] = set()
    every = False
    for binding in binding_list_usable(user=user, provider=LOCAL_PROVIDER, tool=BindingTool.KNOWLEDGE_SEARCH):
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


#: Chunks shown on either side of a cited chunk that has no page (text, Markdown, HTML).
PASSAGE_WINDOW = 20
#: At most this many chunks on either side within the cited PDF page and its neighbours,
#: so a page holding a book's worth of text cannot make the page unbounded.
PASSAGE_PAGE_LIMIT = 60


def chunk_by_digest(
    *, collection_name: str, digest: str, collection_ids: Iterable[int] | None = None
) -> Chunk | None:
    """The chunk of the collection named ``collection_name`` whose text has ``digest``.

    When several documents of the collection hold the identical chunk (a file ingested
    twice under two names), the one of the lowest document id is chosen, then the
    lowest ordinal: the same link always opens the same document. ``collection_ids``,
    when given, bounds the search to the collections a reader may read.
    """
    if not is_digest(digest) or not _storable(collection_name):
        return None
    chunks = Chunk.objects.filter(text_digest=digest, document__collection__name=collection_name)
    if collection_ids is not None:
        chunks = chunks.filter(document__collection_id__in=list(collection_ids))
    return chunks.select_related("document__collection").order_by("document_id", "ordinal").first()


def _storable(name: str) -> bool:
    """Whether ``name`` could be a collection's name; PostgreSQL refuses NUL, drivers lone surrogates."""
    if "\x00" in name or len(name) > MAX_COLLECTION_NAME:
        return False
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def passage_locate(*, collection_name: str, excerpt: str) -> Chunk | None:
    """The stored chunk an excerpt of the collection ``collection_name`` was retrieved from.

    Matches the exact text only (by its digest): a shortened excerpt matches nothing.
    Ties between documents go to the lowest document id (``chunk_by_digest``).
    """
    return chunk_by_digest(collection_name=collection_name, digest=text_digest(excerpt))


@dataclass(frozen=True, slots=True)
class PassageWindow:
    """The text around a cited chunk, in document order."""

    chunk: Chunk
    chunks: list[Chunk]
    earlier_hidden: bool
    later_hidden: bool

    @property
    def pages(self) -> list[int]:
        return sorted({c.page for c in self.chunks if c.page is not None})


def passage_window(*, chunk: Chunk) -> PassageWindow:
    """The chunks shown around ``chunk``: its PDF page and the pages either side, else a window.

    Ordinals run from 1 without gaps (``document_ingest`` writes them so), which tells
    whether text before or after the window exists without counting it.
    """
    chunks = Chunk.objects.filter(document_id=chunk.document_id)
    if chunk.page is not None:
        shown = chunks.filter(
            page__gte=chunk.page - 1,
            page__lte=chunk.page + 1,
            ordinal__gte=chunk.ordinal - PASSAGE_PAGE_LIMIT,
            ordinal__lte=chunk.ordinal + PASSAGE_PAGE_LIMIT,
        )
    else:
        shown = chunks.filter(
            ordinal__gte=chunk.ordinal - PASSAGE_WINDOW, ordinal__lte=chunk.ordinal + PASSAGE_WINDOW
        )
    # The cited chunk itself, should a re-ingest have replaced the document since it was found.
    window = list(shown.order_by("ordinal")) or [chunk]
    last = chunks.aggregate(last=Max("ordinal"))["last"] or chunk.ordinal
    return PassageWindow(
        chunk=chunk,
        chunks=window,
        earlier_hidden=window[0].ordinal > 1,
        later_hidden=window[-1].ordinal < last,
    )
