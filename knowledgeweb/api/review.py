"""The review endpoints: a thread's items with the verdicts you may see, and verdicts on them.

Handlers are thin: the access and the verdict service (``knowledgeweb.review``) decide, and
domain errors become JSON in ``knowledgeweb.api.main``. Whoever may not read the thread gets
404; a reader who reviews nothing here gets 403 on a verdict; nothing is written on any refusal.
"""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from django.http import HttpRequest
from ninja import Path, Router

from knowledgeweb.api.auth import rate_limit_key, request_user
from knowledgeweb.api.schemas.errors import ErrorOut
from knowledgeweb.api.schemas.review import ItemOut, QueueOut, ReviewOut, VerdictIn, VerdictOut
from knowledgeweb.review.access import thread_access
from knowledgeweb.review.models import ItemKind
from knowledgeweb.review.reading import guidelines_html
from knowledgeweb.review.selectors import ItemVerdicts, VerdictView, thread_review
from knowledgeweb.review.services import verdict_record

router = Router(tags=["review"])


_ERRORS: dict[int, Any] = {401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}
_WRITE_ERRORS: dict[int, Any] = {**_ERRORS, 400: ErrorOut, 413: ErrorOut}


def _verdict_out(verdict: VerdictView) -> VerdictOut:
    if verdict.created_at is None:  # the API reads verdicts with their times (the default)
        raise ValueError("a verdict read without its time cannot be sent")
    return VerdictOut(
        id=verdict.pk,
        kind=verdict.kind,
        message_id=verdict.message_id,
        position=verdict.position,
        href=verdict.href,
        label=verdict.label,
        verdict=verdict.value,
        note=verdict.note,
        reviewer=verdict.reviewer_name,
        created_at=verdict.created_at,
    )


def _item_out(entry: ItemVerdicts) -> ItemOut:
    item = entry.item
    return ItemOut(
        key=item.key,
        kind=item.kind,
        message_id=item.message_id,
        position=item.position,
        answer=item.answer,
        state=item.state,
        href=item.href,
        label=item.label,
        label_mismatch=item.label_mismatch,
        uncited=item.uncited,
        judgeable=item.judgeable,
        allowed=list(item.values),
        verdicts=[_verdict_out(v) for v in entry.history],
        mine=_verdict_out(entry.mine) if entry.mine is not None else None,
        hidden=entry.hidden,
    )


@router.get("/{thread_id}/review", response={200: ReviewOut, **_ERRORS}, summary="A thread's review items")
def review_get(request: HttpRequest, thread_id: UUID) -> ReviewOut:
    """Every item of the thread (each citation, found or not, and each answer) with the verdicts
    you may see: yours, and other reviewers' only on items you have judged (blind by default);
    a queue's lead sees all. Its owner, its queues' reviewers and lead read it; anyone else 404."""
    access = thread_access(user=request_user(request), thread_id=thread_id)
    review = thread_review(access=access)
    return ReviewOut(
        thread_id=access.thread.id,
        role=access.role,
        reviews=review.reviews,
        sees_all=review.sees_all,
        judged=review.judged,
        judgeable=review.judgeable,
        counts=dict(review.counts),
        queues=[
            QueueOut(id=q.pk, name=q.name, guidelines_html=guidelines_html(q.guidelines))
            for q in access.queues
        ],
        items=[_item_out(entry) for entry in review.items],
        orphaned=[_verdict_out(v) for v in review.orphaned],
    )


def _record(
    request: HttpRequest, thread_id: UUID, message_id: UUID, kind: str, n: int, payload: VerdictIn
) -> VerdictOut:
    verdict = verdict_record(
        reviewer=request_user(request),
        thread_id=thread_id,
        message_id=message_id,
        kind=kind,
        position=n,
        value=payload.verdict,
        note=payload.note,
        rate_key=rate_limit_key(request),
    )
    return _verdict_out(VerdictView.of(verdict))


@router.put(
    "/{thread_id}/review/citations/{message_id}/{n}",
    response={200: VerdictOut, **_WRITE_ERRORS},
    summary="Judge a citation",
)
def review_citation(
    request: HttpRequest,
    thread_id: UUID,
    message_id: UUID,
    n: Annotated[int, Path(ge=1, le=100_000, description="The citation's number in its answer, from 1.")],
    payload: VerdictIn,
) -> VerdictOut:
    """Record your verdict on citation ``n`` of an answer whose source was found. Verdicts are
    append-only: your latest counts and the history stays. 404 for a thread you may not read,
    403 if you do not review it, 422 naming the item for a citation that does not exist or
    whose source was not found, 422 listing the allowed verdicts for an unknown one; a note
    counts against your quotas (413) and every verdict against ``RATE_LIMIT_WRITE`` (429)."""
    return _record(request, thread_id, message_id, ItemKind.CITATION, n, payload)


@router.put(
    "/{thread_id}/review/answers/{message_id}",
    response={200: VerdictOut, **_WRITE_ERRORS},
    summary="Judge an answer",
)
def review_answer(request: HttpRequest, thread_id: UUID, message_id: UUID, payload: VerdictIn) -> VerdictOut:
    """Record your verdict on an answer (cited or not), with the same rules as a citation's."""
    return _record(request, thread_id, message_id, ItemKind.ANSWER, 0, payload)
