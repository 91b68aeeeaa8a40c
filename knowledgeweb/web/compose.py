"""Streamed answers and follow-up questions (issue 13).

- ``POST /ask/stream/``: the Ask form, answered as server-sent events (the page's
  script reads them with ``fetch``); the thread is written when the answer completes.
- ``POST /threads/<id>/ask/``: a follow-up from the thread page; without JavaScript it
  runs the whole turn and redirects to the thread.
- ``POST /threads/<id>/ask/stream/``: the same follow-up, streamed.

A refusal before the answer starts (bad question, binding or answer model, a failed
search, past the limit on questions: 429) is a 4xx JSON ``{"error", "kind"}`` for the
stream endpoints and the form with its error for the form posts: nothing is written.
A stream sends completed sentences, a heartbeat comment every second (so the server
notices a browser that left, and the turn cancels the model call and writes nothing),
and ``done`` once the turn is recorded. Each stream holds a server thread while it
lasts (docs/operations.md#serving-in-production: size the threads for it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import cast
from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from knowledgeweb.answers.errors import AnswerError
from knowledgeweb.answers.services import TOOL
from knowledgeweb.composer.selectors import answer_models_for
from knowledgeweb.composer.services import HEARTBEAT_SECONDS, turn_events, turn_prepare, turn_run
from knowledgeweb.composer.turn import EXTRACTIVE, PreparedTurn, TurnResult
from knowledgeweb.ops import ratelimit
from knowledgeweb.retrieval import retrieval_capabilities
from knowledgeweb.review.access import thread_get_for_writer
from knowledgeweb.review.errors import ReviewForbiddenError
from knowledgeweb.threads.errors import ThreadNotFound
from knowledgeweb.threads.models import Thread
from knowledgeweb.web.errors import error_json, error_page
from knowledgeweb.web.question_form import QuestionForm

#: The web pages search and compose as the user, not as an agent.
WEB_AGENT_NAME = ""
EXTRACTIVE_LABEL = "Quoted sentences (no model)"


def composer_choices(user: User) -> list[tuple[str, str]]:
    """The extractive default first, then every answer model this user may use."""
    models = answer_models_for(user=user, agent_name=WEB_AGENT_NAME)
    return [(EXTRACTIVE, EXTRACTIVE_LABEL), *((m.name, f"{m.name} ({m.model})") for m in models)]


def binding_choices(user: User) -> list[tuple[str, str]]:
    return [
        (capability.binding, f"{capability.binding} ({capability.provider})")
        for capability in retrieval_capabilities(user=user, agent_name=WEB_AGENT_NAME)
        if capability.tool == TOOL
    ]


def follow_up_form(request: HttpRequest) -> QuestionForm | None:
    """The thread page's follow-up form, or ``None`` when the owner has no binding to search with."""
    user = cast(User, request.user)
    bindings = binding_choices(user)
    return QuestionForm(bindings=bindings, composers=composer_choices(user)) if bindings else None


def _prepare(request: HttpRequest, thread: Thread | None, form: QuestionForm | None = None) -> PreparedTurn:
    """The one turn service, asked as the signed-in user; its limit on questions counts per user
    (``ratelimit.RateLimited`` past it, nothing run).

    ``form`` is a page's form its view has already validated; without it the post is
    validated here with the same form, built without offers (the service checks them).
    """
    user = cast(User, request.user)
    if form is None:
        form = QuestionForm(request.POST)
        if not form.is_valid():
            message, kind = form.error()
            raise AnswerError(message, kind=kind)  # type: ignore[arg-type]
    return turn_prepare(
        user=user,
        question=form.cleaned_data["question"],
        binding_name=form.cleaned_data["binding"],
        rate_key=f"user:{user.pk}",
        composer=form.cleaned_data.get("composer") or EXTRACTIVE,
        thread=thread,
        agent_name=WEB_AGENT_NAME,
    )


def _owned_thread(request: HttpRequest, thread_id: UUID) -> Thread:
    try:
        return thread_get_for_writer(user=request.user, thread_id=thread_id)
    except ThreadNotFound as exc:
        raise Http404(str(exc)) from exc
    except ReviewForbiddenError as exc:  # a reviewer reads the thread but never asks in it
        raise PermissionDenied(str(exc)) from exc


@login_required
@require_POST
def ask_stream(request: HttpRequest) -> HttpResponseBase:
    return _stream(request, None)


@login_required
@require_POST
def thread_ask_stream(request: HttpRequest, thread_id: UUID) -> HttpResponseBase:
    return _stream(request, _owned_thread(request, thread_id))


@login_required
@require_POST
def thread_ask(request: HttpRequest, thread_id: UUID) -> HttpResponse:
    """The follow-up form without JavaScript: the whole turn, then the thread."""
    thread = _owned_thread(request, thread_id)
    try:
        result = turn_run(_prepare(request, thread))
    except AnswerError as exc:
        return error_page(
            request, "web/thread_ask_error.html", {"thread": thread, "error_kind": exc.kind}, exc
        )
    except ratelimit.RateLimited as exc:
        context = {"thread": thread, "error": exc.detail, "error_kind": "rate"}
        response = render(request, "web/thread_ask_error.html", context, status=429)
        response["Retry-After"] = str(exc.retry_after)
        return response
    return redirect(_thread_url(result))


def run_form_turn(request: HttpRequest, form: QuestionForm) -> HttpResponse:
    """The Ask form without JavaScript (quoted sentences or an answer model), already valid:
    the whole turn, then the new thread. Raises ``AnswerError`` or ``ratelimit.RateLimited``;
    nothing is written then."""
    result = turn_run(_prepare(request, None, form))
    return redirect(_thread_url(result))


def _stream(request: HttpRequest, thread: Thread | None) -> HttpResponseBase:
    # An event stream must reach the browser event by event. GZipMiddleware would compress
    # it through one gzip stream that holds small writes back until a block fills, so the
    # stream is sent uncompressed: the middleware reads this header when the response passes.
    request.META["HTTP_ACCEPT_ENCODING"] = "identity"
    try:
        prepared = _prepare(request, thread)
    except AnswerError as exc:
        return error_json(exc)
    except ratelimit.RateLimited as exc:
        return _too_many(exc)
    response = StreamingHttpResponse(_sse(prepared), content_type="text/event-stream; charset=utf-8")
    response["Cache-Control"] = "no-cache, no-store"
    # Proxies (nginx) must pass each event on at once rather than buffer the stream.
    response["X-Accel-Buffering"] = "no"
    return response


def _too_many(exc: ratelimit.RateLimited) -> HttpResponseBase:
    response = JsonResponse({"error": exc.detail, "kind": "rate"}, status=429)
    response["Retry-After"] = str(exc.retry_after)
    return response


def _sse(prepared: PreparedTurn) -> Iterator[bytes]:
    # A heartbeat (an SSE comment, which the page ignores) at least every second: the server
    # notices a client that went away only when it writes, also while the model is silent.
    events = turn_events(prepared, heartbeat=HEARTBEAT_SECONDS)
    # Sent at once, while the model thinks: the page says what was found, and the
    # response's first bytes are on the wire (and acknowledged) before the answer's,
    # so the first answer event is not held back by Nagle's algorithm.
    yield _event("start", _start(prepared))
    try:
        for event in events:
            if event.kind == "done":
                yield _event("done", _done(event.data))
            elif event.kind == "sentence":
                yield _event("sentence", {"parts": event.data})
            else:
                yield HEARTBEAT
    except AnswerError as exc:
        # Refused at write (a quota reached while the answer streamed): nothing was written.
        yield _event("error", {"error": exc.message, "kind": exc.kind})
    finally:
        # A client that went away closes this generator: closing the turn's generator
        # too ends the model call before the turn is written, so nothing is stored.
        events.close()


#: An SSE comment: no event for the page, a write for the server.
HEARTBEAT = b": heartbeat\n\n"


def _event(name: str, data: object) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def _thread_url(result: TurnResult) -> str:
    return reverse("web:thread-detail", kwargs={"thread_id": result.thread_id})


def _start(prepared: PreparedTurn) -> dict[str, object]:
    context = (
        prepared.prompt.metadata(prepared.model.context_budget) if prepared.prompt and prepared.model else {}
    )
    return {
        "composer": prepared.model.name if prepared.model else EXTRACTIVE,
        "sources": len(prepared.available),
        "context": context,
    }


def _done(result: TurnResult) -> dict[str, object]:
    return {
        "status": result.status,
        "code": result.code,
        "detail": result.detail,
        "thread_url": _thread_url(result),
        "citations": result.citations.as_dict(),
        "context": result.context,
    }
