"""The Ask page: question -> retrieval -> composed answer -> the new thread.

The view only wires the form to ``question_answer``; every write and every
refusal happens there, in one transaction (see ``knowledgeweb.answers.services``).
"""

from __future__ import annotations

from typing import cast

from django import forms
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from knowledgeweb.answers import ExtractiveComposer
from knowledgeweb.answers.errors import AnswerError
from knowledgeweb.answers.services import MAX_QUESTION_CHARS, TOOL, question_answer
from knowledgeweb.retrieval import retrieval_capabilities
from knowledgeweb.web import compose

# The Ask page searches as the user, not as an agent: bindings limited to named
# agents are not offered here.
ASK_AGENT_NAME = ""
NO_BINDINGS = (
    "No knowledge binding is available to you, so there is nothing to search. "
    "Ask an administrator to bind one to your account."
)


_ERROR_STATUS = {"question": 400, "binding": 403, "provider": 502, "quota": 413}


class AskForm(forms.Form):
    question = forms.CharField(
        max_length=MAX_QUESTION_CHARS,
        widget=forms.Textarea(attrs={"rows": 3, "data-field": "question"}),
        error_messages={"required": "Enter a question."},
    )
    binding = forms.ChoiceField(
        widget=forms.Select(attrs={"data-field": "binding"}),
        error_messages={"required": "Choose a binding.", "invalid_choice": "Choose one of your bindings."},
    )

    # Issue 13: the extractive default, or an answer model the user may use.
    composer = forms.ChoiceField(
        required=False,
        label="Answer with",
        widget=forms.Select(attrs={"data-field": "composer"}),
        error_messages={"invalid_choice": "Choose one of your answer models."},
    )

    def __init__(
        self,
        *args: object,
        bindings: list[tuple[str, str]],
        composers: list[tuple[str, str]] | None = None,
        **kwargs: object,
    ) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["binding"].choices = bindings  # type: ignore[attr-defined]
        self.fields["composer"].choices = composers or [(compose.EXTRACTIVE, compose.EXTRACTIVE_LABEL)]  # type: ignore[attr-defined]


def _bindings(user: User) -> list[tuple[str, str]]:
    return [
        (capability.binding, f"{capability.binding} ({capability.provider})")
        for capability in retrieval_capabilities(user=user, agent_name=ASK_AGENT_NAME)
        if capability.tool == TOOL
    ]


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def ask(request: HttpRequest) -> HttpResponse:
    user = cast(User, request.user)  # login_required: never anonymous here
    bindings = _bindings(user)
    if not bindings:
        status = 403 if request.method == "POST" else 200
        return render(
            request, "web/ask.html", {"error": NO_BINDINGS, "error_kind": "no-bindings"}, status=status
        )
    composers = compose.composer_choices(user)
    if request.method != "POST":
        return render(request, "web/ask.html", {"form": AskForm(bindings=bindings, composers=composers)})

    form = AskForm(request.POST, bindings=bindings, composers=composers)
    context: dict[str, object] = {"form": form}
    status = 400
    if form.is_valid() and form.cleaned_data.get("composer") not in {None, "", compose.EXTRACTIVE}:
        # An answer model: the streamed flow's service, run to the end (no JavaScript here).
        outcome = compose.run_form_turn(request)
        if not isinstance(outcome, AnswerError):
            return outcome
        context.update(error=outcome.message, error_kind=outcome.kind)
        status = _ERROR_STATUS[outcome.kind]
    elif form.is_valid():
        try:
            thread = question_answer(
                user=user,
                question=form.cleaned_data["question"],
                binding_name=form.cleaned_data["binding"],
                composer=ExtractiveComposer(),
                agent_name=ASK_AGENT_NAME,
            )
        except AnswerError as exc:
            context.update(error=exc.message, error_kind=exc.kind)
            status = _ERROR_STATUS[exc.kind]
        else:
            return redirect("web:thread-detail", thread_id=thread.id)
    return render(request, "web/ask.html", context, status=status)
