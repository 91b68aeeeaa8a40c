"""Review queue endpoints (issue 27): my queues with progress, the next thread, agreement,
final verdicts and the dataset export. Same auth, limits and JSON errors as the rest."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.urls import reverse
from ninja import Query, Router, Status

from knowledgeweb.api.auth import rate_limit, request_user
from knowledgeweb.api.schemas.errors import ErrorOut
from knowledgeweb.api.schemas.review import (
    AgreementOut,
    DatasetExportQuery,
    DisputedOut,
    FinalVerdictIn,
    FinalVerdictOut,
    NextOut,
    ReviewerProgressOut,
    ReviewQueueOut,
)
from knowledgeweb.review.adjudication import final_verdict_record, queue_get_for_reviewer
from knowledgeweb.review.agreement import queue_agreement, visible_judgements
from knowledgeweb.review.dataset import CONTENT_TYPES, export_format, export_lines
from knowledgeweb.review.models import ReviewQueue
from knowledgeweb.review.queueing import queue_next, queue_progress, queues_for_reviewer

router = Router(tags=["review queues"])


_ERRORS: dict[int, Any] = {401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}


def _names(queue: ReviewQueue) -> dict[int, str]:
    return {user.pk: user.username for user in queue.reviewers.all()} | (
        {queue.lead.pk: queue.lead.username} if queue.lead else {}
    )


def queue_out(queue: ReviewQueue) -> ReviewQueueOut:
    progress = queue_progress(queue)
    names = _names(queue)
    return ReviewQueueOut(
        id=queue.pk,
        name=queue.name,
        description=queue.description,
        overlap=queue.overlap,
        reservation_minutes=queue.reservation_minutes,
        lead=queue.lead.username if queue.lead else None,
        items=progress.items,
        items_done=progress.items_done,
        threads=progress.threads,
        threads_done=progress.threads_done,
        states=dict(progress.states),
        per_reviewer=[
            ReviewerProgressOut(reviewer=names.get(pk, str(pk)), items_judged=count)
            for pk, count in sorted(progress.per_reviewer.items())
        ],
    )


@router.get("", response={200: list[ReviewQueueOut], 401: ErrorOut}, summary="My review queues")
def list_queues(request: HttpRequest) -> list[ReviewQueueOut]:
    """The queues I review in or lead, each with its progress."""
    queues = queues_for_reviewer(user=request_user(request)).select_related("lead")
    return [queue_out(queue) for queue in queues]


@router.post(
    "/{queue_id}/next",
    response={200: NextOut, 204: None, 429: ErrorOut, **_ERRORS},
    summary="Reserve my next thread",
)
def next_thread(request: HttpRequest, queue_id: int) -> Status:
    """Reserve the next thread that still needs my verdicts (204 when none is left)."""
    user = request_user(request)
    queue = queue_get_for_reviewer(user=user, queue_id=queue_id)
    rate_limit(request, "write")
    reservation = queue_next(queue=queue, reviewer=user)
    if reservation is None:
        return Status(204, None)
    thread = reservation.thread
    return Status(
        200,
        NextOut(
            thread_id=thread.id,
            title=thread.title,
            expires_at=reservation.expires_at,
            review_url=reverse("web:thread-review", args=[thread.id]),
        ),
    )


@router.get(
    "/{queue_id}/agreement", response={200: AgreementOut, **_ERRORS}, summary="Agreement and disputes"
)
def agreement(request: HttpRequest, queue_id: int) -> AgreementOut:
    user = request_user(request)
    queue = queue_get_for_reviewer(user=user, queue_id=queue_id)
    result = queue_agreement(queue)
    leads = queue.lead_id == user.pk
    names = _names(queue)
    return AgreementOut(
        reviewers=[names.get(pk, str(pk)) for pk in result.reviewers],
        units=result.units,
        alpha=result.alpha,
        kappa=result.kappa,
        disputed=[
            DisputedOut(
                thread_id=d.item.thread_id,
                message_id=d.item.key.message_id,
                kind=d.item.key.kind,  # type: ignore[arg-type]
                position=d.item.key.position,
                label=d.item.label,
                href=d.item.href,
                verdicts={
                    names.get(pk, str(pk)): j.value
                    for pk, j in visible_judgements(d, user.pk, leads=leads).items()
                },
                final=d.final,
            )
            for d in result.disputed
        ],
    )


@router.post(
    "/{queue_id}/final-verdicts",
    response={201: FinalVerdictOut, 400: ErrorOut, 429: ErrorOut, **_ERRORS},
    summary="Record the lead's final verdict on a disputed item",
)
def final_verdict(request: HttpRequest, queue_id: int, body: FinalVerdictIn) -> Status:
    user = request_user(request)
    queue = queue_get_for_reviewer(user=user, queue_id=queue_id)
    rate_limit(request, "write")
    final = final_verdict_record(
        queue=queue,
        lead=user,
        message_id=body.message_id,
        kind=body.kind,
        position=body.position,
        value=body.verdict,
        note=body.note,
    )
    return Status(
        201,
        FinalVerdictOut(
            id=final.pk,
            message_id=final.message_id,
            kind=final.kind,
            position=final.position,
            verdict=final.value,
            note=final.note,
            created_at=final.created_at,
        ),
    )


@router.get(
    "/{queue_id}/export",
    response={**_ERRORS},
    summary="Download the queue's dataset",
    openapi_extra={
        "responses": {
            "200": {
                "description": "One row per judged citation and answer (contracts/review_dataset_row.v1.json), streamed.",
                "content": {
                    "application/x-ndjson": {"schema": {"type": "string"}},
                    "text/csv": {"schema": {"type": "string"}},
                },
            }
        }
    },
)
def export(request: HttpRequest, queue_id: int, query: Query[DatasetExportQuery]) -> HttpResponse:
    queue = queue_get_for_reviewer(user=request_user(request), queue_id=queue_id)
    format = export_format(query.format)
    response = StreamingHttpResponse(export_lines(queue, format), content_type=CONTENT_TYPES[format])
    response["Content-Disposition"] = f'attachment; filename="review-queue-{queue.pk}.{format}"'
    return response  # type: ignore[return-value]
