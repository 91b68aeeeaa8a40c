"""Validation of selected documents before any search (docs/providers.md, "Documents").

Ids go to RAGFlow in batches of at most 100, at most 4 batches in flight (and at
most 4 requests in flight at the host across the whole process, see
``knowledgeweb.providers.slots``). Any batch error, missing document or
non-searchable document rejects the whole scope: a search never runs over a
narrower or broader set than was selected. Every batch shares the search's deadline.
"""

from __future__ import annotations

from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from urllib.parse import quote

from knowledgeweb.providers.client import ProviderSession
from knowledgeweb.providers.errors import (
    MalformedResponseError,
    ProviderAuthError,
    ProviderError,
    ProviderTimeoutError,
    ScopeRejectedError,
)
from knowledgeweb.providers.ragflow.replies import ragflow_data
from knowledgeweb.providers.ragflow.scope import DatasetSelection

BATCH_SIZE = 100
MAX_BATCHES_IN_FLIGHT = 4


@dataclass(frozen=True)
class _Batch:
    position: int
    dataset_id: str
    document_ids: tuple[str, ...]


def validate_documents(
    session: ProviderSession, selection: tuple[DatasetSelection, ...]
) -> tuple[DatasetSelection, ...]:
    """Return the selection with every document confirmed searchable, in input order."""
    pieces = [(item.dataset_id, ids) for item in selection for ids in _chunked(item.document_ids)]
    batches = [
        _Batch(position=index, dataset_id=dataset_id, document_ids=ids)
        for index, (dataset_id, ids) in enumerate(pieces, start=1)
    ]
    if not batches:
        return selection
    pool = ThreadPoolExecutor(max_workers=MAX_BATCHES_IN_FLIGHT, thread_name_prefix="ragflow-scope")
    futures: list[Future[tuple[str, ...]]] = [
        pool.submit(_validate_batch, session, batch, len(batches)) for batch in batches
    ]
    try:
        wait(futures, return_when=FIRST_EXCEPTION)
        failed = [future for future in futures if future.done() and future.exception() is not None]
    finally:
        # On the first failure the batches not yet started are cancelled: the scope
        # is rejected whatever they would say.
        pool.shutdown(wait=True, cancel_futures=True)
    if failed:
        raise failed[0].exception()  # type: ignore[misc]
    confirmed: dict[str, list[str]] = {}
    # Results are collected in submission order, so ids merge in input order
    # whatever order the batches finished in.
    for batch, future in zip(batches, futures, strict=True):
        confirmed.setdefault(batch.dataset_id, []).extend(future.result())
    return tuple(
        DatasetSelection(dataset_id=item.dataset_id, document_ids=tuple(confirmed.get(item.dataset_id, ())))
        if item.document_ids
        else item
        for item in selection
    )


def _chunked(ids: tuple[str, ...]) -> list[tuple[str, ...]]:
    return [ids[start : start + BATCH_SIZE] for start in range(0, len(ids), BATCH_SIZE)]


def _validate_batch(session: ProviderSession, batch: _Batch, total: int) -> tuple[str, ...]:
    where = f"batch {batch.position} of {total} (dataset {batch.dataset_id})"
    try:
        return _check_batch(session, batch, where)
    except (ProviderAuthError, ScopeRejectedError, ProviderTimeoutError):
        # A timeout is the search's deadline, not a verdict on the documents.
        raise
    except ProviderError as exc:
        raise ScopeRejectedError(
            f"The selected documents were rejected: {where} failed: {exc}", code=exc.code
        ) from None


def _check_batch(session: ProviderSession, batch: _Batch, where: str) -> tuple[str, ...]:
    found = _listed(session, batch, [("ids", document_id) for document_id in batch.document_ids], where)
    if set(found) - set(batch.document_ids):
        # Before v0.26 RAGFlow ignores ``ids`` and lists the dataset's first documents
        # instead. The single ``id=`` filter works on every version, so each document
        # is asked for alone, still inside this batch's one worker.
        found = {}
        for document_id in batch.document_ids:
            found.update(_listed(session, batch, [("id", document_id)], where))
    for document_id in batch.document_ids:
        doc = found.get(document_id)
        if doc is None:
            raise ScopeRejectedError(
                f"The selected documents were rejected: document {document_id} was not found in "
                f"dataset {batch.dataset_id}."
            )
        if not _searchable(doc):
            raise ScopeRejectedError(
                f"The selected documents were rejected: document {document_id} in dataset "
                f"{batch.dataset_id} is not searchable (run={doc.get('run')!r}, "
                f"status={doc.get('status')!r}, chunk_count={doc.get('chunk_count')!r})."
            )
    return batch.document_ids


def _listed(
    session: ProviderSession, batch: _Batch, filters: list[tuple[str, str]], where: str
) -> dict[str, dict[str, object]]:
    """The documents RAGFlow lists for ``filters``, by id."""
    reply = session.get(
        f"/api/v1/datasets/{quote(batch.dataset_id, safe='')}/documents",
        params=[("page", 1), ("page_size", len(filters)), *filters],
        action=f"document check of {where}",
    )
    data = ragflow_data(reply, action="document check")
    docs = data.get("docs") if isinstance(data, dict) else None
    if not isinstance(docs, list):
        raise MalformedResponseError(f"RAGFlow's document list for {where} has no 'docs' list.")
    return {doc["id"]: doc for doc in docs if isinstance(doc, dict) and isinstance(doc.get("id"), str)}


def _searchable(doc: dict[str, object]) -> bool:
    chunk_count = doc.get("chunk_count")
    return (
        doc.get("run") == "DONE"
        and doc.get("status") == "1"
        and isinstance(chunk_count, int)
        and not isinstance(chunk_count, bool)
        and chunk_count > 0
    )
