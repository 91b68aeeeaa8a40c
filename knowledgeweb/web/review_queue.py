"""The review queue pages (issue 27): my queues with progress, "Start reviewing", and a queue's
agreement and disputes, where its lead records final verdicts. Thin: selectors and services
of the review app do the work; a queue the user neither reviews in nor leads is a 404."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from knowledgeweb.errors import DomainError
from knowledgeweb.review.adjudication import allowed_values, final_verdict_record, queue_get_for_reviewer
from knowledgeweb.review.agreement import DisputedItem, queue_agreement, visible_judgements
from knowledgeweb.review.models import ReviewQueue
from knowledgeweb.review.queue_errors import FinalVerdictInvalid, NotQueueLead, QueueNotFound
from knowledgeweb.review.queueing import (
    QueueProgress,
    ThreadState,
    queue_next,
    queue_progress,
    queues_for_reviewer,
)
from knowledgeweb.review.selectors import VERDICT_ICONS, VERDICT_WORDS
from knowledgeweb.threads.models import Thread
from knowledgeweb.web.errors import error_page


def _queue(request: HttpRequest, queue_id: int) -> ReviewQueue:
    try:
        return queue_get_for_reviewer(user=request.user, queue_id=queue_id)
    except QueueNotFound as exc:
        raise Http404(str(exc)) from exc


def _names(queue: ReviewQueue) -> dict[int, str]:
    users = User.objects.filter(pk__in=[*queue.reviewers.values_list("pk", flat=True), queue.lead_id])
    return dict(users.values_list("pk", "username"))


@dataclass
class QueueCard:
    queue: ReviewQueue
    progress: QueueProgress
    reviewers: list[tuple[str, int]]
    percent: int
    states: list[tuple[str, int]]


def _card(queue: ReviewQueue) -> QueueCard:
    progress = queue_progress(queue)
    names = _names(queue)
    reviewers = sorted((names.get(pk, str(pk)), count) for pk, count in progress.per_reviewer.items())
    percent = round(100 * progress.items_done / progress.items) if progress.items else 100
    order = [str(state) for state in ThreadState]
    states = sorted(progress.states.items(), key=lambda pair: order.index(pair[0]))
    return QueueCard(queue, progress, reviewers, percent, [(str(s), n) for s, n in states])


@require_safe
@login_required
def queue_list(request: HttpRequest) -> HttpResponse:
    """``/review/``: the queues I review in or lead, each with its progress."""
    cards = [_card(queue) for queue in queues_for_reviewer(user=request.user).select_related("lead")]
    return render(request, "web/review_queues.html", {"cards": cards})


@require_POST
@login_required
def queue_start(request: HttpRequest, queue_id: int) -> HttpResponse:
    """Reserve my next thread of the queue and open it in review mode (CSRF-checked POST)."""
    queue = _queue(request, queue_id)
    reservation = queue_next(queue=queue, reviewer=request.user)  # type: ignore[arg-type]
    if reservation is None:
        messages.info(request, f"Nothing in “{queue.name}” needs your verdicts now.")
        return redirect("web:review-queue", queue_id=queue.pk)
    minutes = queue.reservation_minutes
    messages.info(
        request,
        f"“{reservation.thread.title}” is reserved for you for {minutes} minute{'s' * (minutes != 1)}.",
    )
    return redirect("web:thread-review", thread_id=reservation.thread_id)


@dataclass
class DisputeRow:
    disputed: DisputedItem
    thread: Thread | None
    verdicts: list[tuple[str, str, str]]
    allowed: list[tuple[str, str]]
    final_word: str = ""


@require_safe
@login_required
def queue_detail(request: HttpRequest, queue_id: int) -> HttpResponse:
    """A queue's progress, agreement and disputed items (the lead's final verdict forms)."""
    queue = _queue(request, queue_id)
    card = _card(queue)
    result = queue_agreement(queue)
    names = _names(queue)
    leads = queue.lead_id == request.user.pk
    threads = Thread.objects.in_bulk([d.item.thread_id for d in result.disputed])
    rows = [
        DisputeRow(
            disputed=d,
            thread=threads.get(d.item.thread_id),
            verdicts=[
                (names.get(pk, str(pk)), VERDICT_ICONS.get(j.value, ""), VERDICT_WORDS.get(j.value, j.value))
                for pk, j in sorted(visible_judgements(d, request.user.pk or 0, leads=leads).items())
            ],
            allowed=[(v, VERDICT_WORDS[v]) for v in allowed_values(d.item.key.kind)],
            final_word=VERDICT_WORDS.get(d.final or "", ""),
        )
        for d in result.disputed
    ]
    context = {
        "queue": queue,
        "card": card,
        "agreement": result,
        "reviewers": [names.get(pk, str(pk)) for pk in result.reviewers],
        "disputes": rows,
        "leads": leads,
    }
    return render(request, "web/review_queue.html", context)


@require_POST
@login_required
def final_verdict_post(request: HttpRequest, queue_id: int) -> HttpResponse:
    """The lead's final verdict on a disputed item, from the queue page's form."""
    queue = _queue(request, queue_id)
    if queue.lead_id != request.user.pk:
        refused = NotQueueLead("Only the queue's lead records a final verdict.")
        return error_page(request, "web/review_queue_error.html", {"queue": queue}, refused)
    try:
        message_id = UUID(request.POST.get("message", ""))
        position = request.POST.get("position", "")
        number = int(position) if position.isdigit() and len(position) <= 6 else -1
        final_verdict_record(
            queue=queue,
            lead=request.user,
            message_id=message_id,
            kind=request.POST.get("kind", ""),
            position=number,
            value=request.POST.get("verdict", ""),
            note=request.POST.get("note", ""),
        )
    except ValueError:
        invalid = FinalVerdictInvalid("The form names no item of this queue. Nothing was written.")
        return error_page(request, "web/review_queue_error.html", {"queue": queue}, invalid)
    except DomainError as exc:
        return error_page(request, "web/review_queue_error.html", {"queue": queue}, exc)
    messages.success(request, "Final verdict recorded.")
    return redirect(reverse("web:review-queue", args=[queue.pk]) + "#disputed")
