"""The Ask page: question -> retrieval -> composed answer -> the new thread.

The view only wires the form to the one turn service (``composer.services``, through
``web.compose``), for quoted sentences and answer models alike; every write, every
refusal and the limit on questions happen there (see ``knowledgeweb.composer.services``).
What the view adds is for people: sources offered by the name and description
an administrator gave them, who to ask when there is none, and failures told in
plain language with a next step (the technical detail stays one click away).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from knowledgeweb.answers.errors import AnswerError
from knowledgeweb.answers.services import TOOL
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.ops import ratelimit
from knowledgeweb.providers.errors import ProviderErrorCode
from knowledgeweb.retrieval import retrieval_capabilities
from knowledgeweb.web import compose
from knowledgeweb.web.errors import INVALID_FORM_STATUS, error_status
from knowledgeweb.web.question_form import QuestionForm

# The Ask page searches as the user, not as an agent: bindings limited to named
# agents are not offered here.
ASK_AGENT_NAME = ""
NO_BINDINGS = "No knowledge source is available to you yet, so there is nothing to search."
#: How many administrators the page names when a user has no source.
MAX_ADMINS_SHOWN = 5

# Provider failure codes (``ProviderError.code``) grouped by what the reader can do about them.
_SETUP_CODES = frozenset(
    {
        ProviderErrorCode.MISCONFIGURED.value,
        ProviderErrorCode.AUTH.value,
        ProviderErrorCode.REJECTED.value,
        ProviderErrorCode.REDIRECT_REFUSED.value,
    }
)


@dataclass(frozen=True, slots=True)
class SourceChoice:
    """A binding as the Ask page offers it."""

    name: str
    title: str
    description: str
    timeout: int


def _bindings(user: User) -> list[SourceChoice]:
    """The user's usable bindings, by display name (the binding's name when it has none)."""
    names = [
        capability.binding
        for capability in retrieval_capabilities(user=user, agent_name=ASK_AGENT_NAME)
        if capability.tool == TOOL
    ]
    found = {b.name: b for b in KnowledgeBinding.objects.filter(name__in=names)}
    return [_choice(found[name]) for name in names if name in found]


def _choice(binding: KnowledgeBinding) -> SourceChoice:
    return SourceChoice(
        name=binding.name,
        title=binding.title.strip() or binding.name,
        description=binding.description.strip(),
        timeout=binding.timeout,
    )


def _administrators() -> list[User]:
    return list(
        User.objects.filter(is_active=True, is_superuser=True).order_by("username")[:MAX_ADMINS_SHOWN]
    )


def _failure_kind(exc: AnswerError) -> str:
    """The provider's failure code (``provider_timeout``...), when the retrieval error carries
    or was raised from one."""
    retrieval = exc.__cause__
    for candidate in (retrieval, getattr(retrieval, "__context__", None)):
        kind = getattr(candidate, "kind", None)
        if isinstance(kind, str):
            return kind
    return ""


def plain_error(exc: AnswerError, source: SourceChoice | None) -> str:
    """What went wrong, for a reader, with what to do next."""
    if exc.kind in ("question", "quota"):
        # Both already say what to do: rephrase the question, or make room (the quota's message).
        return exc.message
    name = f"'{source.title}'" if source else "you picked"
    if exc.kind == "binding":
        return f"The source {name} cannot be used by your account right now. Pick another source."
    kind = _failure_kind(exc)
    if kind == ProviderErrorCode.TIMEOUT.value and source is not None:
        return (
            f"The source {name} did not answer within {source.timeout} seconds. "
            "Try again, or pick another source."
        )
    if kind in _SETUP_CODES:
        return (
            f"The source {name} is not set up correctly, so it cannot be searched. "
            "Pick another source, and tell an administrator."
        )
    return f"The source {name} could not be searched just now. Try again in a moment, or pick another source."


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def ask(request: HttpRequest) -> HttpResponse:
    user = cast(User, request.user)  # login_required: never anonymous here
    bindings = _bindings(user)
    if not bindings:
        status = 403 if request.method == "POST" else 200
        refusal = {"error": NO_BINDINGS, "error_kind": "no-bindings", "administrators": _administrators()}
        return render(request, "web/ask.html", refusal, status=status)
    offers = {
        "bindings": [(b.name, b.title) for b in bindings],
        "composers": compose.composer_choices(user),
    }
    if request.method != "POST":
        form = QuestionForm(**offers)
        return render(request, "web/ask.html", {"form": form, "options": _options(form, bindings)})

    form = QuestionForm(request.POST, **offers)
    context: dict[str, object] = {"form": form, "options": _options(form, bindings)}
    status = INVALID_FORM_STATUS
    if form.is_valid():
        # The one turn service, quoted sentences or an answer model, run to the end.
        try:
            return compose.run_form_turn(request, form)
        except AnswerError as exc:
            source = next((b for b in bindings if b.name == form.cleaned_data["binding"]), None)
            context.update(error=plain_error(exc, source), error_kind=exc.kind)
            if exc.kind != "question":
                context["error_detail"] = exc.message
            status = error_status(exc)
        except ratelimit.RateLimited as exc:
            context.update(error=exc.detail, error_kind="rate")
            response = render(request, "web/ask.html", context, status=429)
            response["Retry-After"] = str(exc.retry_after)
            return response
    return render(request, "web/ask.html", context, status=status)


def _options(form: QuestionForm, bindings: list[SourceChoice]) -> list[tuple[object, SourceChoice]]:
    """Each radio button of the source picker with the binding it offers (same order)."""
    return list(zip(form["binding"], bindings, strict=True))
