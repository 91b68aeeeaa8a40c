"""Review mode, verdict forms and the thread-scoped evidence page (issue 26).

Review mode walks every item of a thread (citations found, with no source or malformed, label
mismatches, answers) one card at a time; a reviewer judges each with one key (1-4 for a
citation, 1-3 for an answer). Without JavaScript every verdict is a CSRF-protected form post
that returns to the next item's anchor. The evidence page shows the one chunk a citation
cites, authorized by the thread (not by the collection, whose document page shows more).
Whoever may not read the thread gets 404 on every one of these.
"""

from __future__ import annotations

from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from knowledgeweb.errors import DomainError
from knowledgeweb.review.access import ThreadAccess, thread_access
from knowledgeweb.review.errors import VerdictInvalidError
from knowledgeweb.review.models import ItemKind
from knowledgeweb.review.selectors import (
    answer_texts,
    thread_guidelines,
    thread_item_evidence,
    thread_items,
    thread_review,
)
from knowledgeweb.review.services import verdict_record
from knowledgeweb.threads.errors import ThreadNotFound
from knowledgeweb.web.errors import error_page
from knowledgeweb.web.rendering.review import review_cards

#: Longest position a form may name (a message holds far fewer citations).
_MAX_POSITION = 100_000


def read_access(request: HttpRequest, thread_id: UUID | str) -> ThreadAccess:
    """The reader's access to the thread (staff holding ``threads.view_thread`` read too), or 404."""
    try:
        return thread_access(user=request.user, thread_id=thread_id, staff=True)
    except ThreadNotFound as exc:
        raise Http404(str(exc)) from exc


@require_safe
@login_required
def review_mode(request: HttpRequest, thread_id: UUID) -> HttpResponse:
    """Every item of the thread as a card: the claim, the closest passage and the source side
    by side, the verdicts the reader may see, and (for a reviewer) one button per verdict."""
    access = read_access(request, thread_id)
    thread = access.thread
    review = thread_review(access=access, items=thread_items(thread=thread))
    cards = review_cards(review, thread_item_evidence(thread=thread), answer_texts(thread=thread))
    context = {
        "thread": thread,
        "access": access,
        "review": review,
        "cards": cards,
        "guidelines": thread_guidelines(access=access),
    }
    return render(request, "web/review.html", context)


@require_POST
@login_required
def verdict_post(request: HttpRequest, thread_id: UUID) -> HttpResponse:
    """Record one verdict from review mode's form, then return to the next item's card."""
    access = read_access(request, thread_id)
    kind = request.POST.get("kind", "")
    position = request.POST.get("position", "0")
    message = request.POST.get("message", "")
    try:
        message_id = UUID(message)
        number = int(position) if position.isdigit() and len(position) <= 6 else -1
        if kind == ItemKind.ANSWER:
            number = 0
        if not 0 <= number <= _MAX_POSITION:
            raise ValueError(position)
    except ValueError:
        exc = VerdictInvalidError("The form names no item of this thread. Nothing was written.")
        return error_page(request, "web/review_error.html", {"thread": access.thread}, exc)
    try:
        verdict_record(
            reviewer=request.user,
            thread_id=access.thread.pk,
            message_id=message_id,
            kind=kind,
            position=number,
            value=request.POST.get("verdict", ""),
            note=request.POST.get("note", ""),
        )
    except DomainError as exc:
        return error_page(request, "web/review_error.html", {"thread": access.thread}, exc)
    after = request.POST.get("next", "")
    anchor = f"#item-{after}" if after.replace("-", "").isalnum() and len(after) <= 64 else ""
    return redirect(reverse("web:thread-review", args=[access.thread.id]) + anchor)


@require_safe
@login_required
def citation_evidence(request: HttpRequest, thread_id: UUID, message_id: UUID, n: int) -> HttpResponse:
    """The chunk citation ``n`` of an answer cites, exactly as retrieved, with the sentences
    closest to its claim marked: nothing else of its document (decision 0125)."""
    access = read_access(request, thread_id)
    evidence = thread_item_evidence(thread=access.thread).get((message_id, n))
    if evidence is None or evidence.source is None:
        raise Http404("No such citation.")
    review = thread_review(access=access)
    entry = next(
        (
            e
            for e in review.items
            if e.item.kind == ItemKind.CITATION and e.item.message_id == message_id and e.item.position == n
        ),
        None,
    )
    if entry is None:
        raise Http404("No such citation.")
    cards = review_cards(review, {(message_id, n): evidence}, {})
    card = next(c for c in cards if c.entry is entry)
    back = reverse("web:thread-detail", args=[access.thread.id]) + f"#{entry.item.anchor}"
    context = {"thread": access.thread, "card": card, "source": evidence.source, "back": back}
    return render(request, "web/evidence.html", context)
