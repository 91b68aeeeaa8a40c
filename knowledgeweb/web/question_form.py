"""The one question form: the Ask page, the thread page's follow-up and every post that asks.

A page builds it with what it offers (``bindings``, ``composers``) and validates its own
post with it: a source or answer model that was not offered is refused on the page, in
the page's words. A post from a page's script (the streams) or from the follow-up form
without JavaScript is validated by the same form built without offers: which bindings
and models the user may use is then checked once, by the turn service
(``composer.services.turn_prepare``), with the same messages as the API's. Either way
the cleaned data goes to the service as it is: a post is read once.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.validators import MaxLengthValidator, ProhibitNullCharactersValidator

from knowledgeweb.answers.services import MAX_QUESTION_CHARS

#: Longer than any binding or answer model name the admin accepts.
MAX_NAME_CHARS = 100


class _OfferedChoiceField(forms.ChoiceField):
    """One of the offered choices; with none offered, any short text the service will check."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            validators=[ProhibitNullCharactersValidator(), MaxLengthValidator(MAX_NAME_CHARS)], **kwargs
        )

    def valid_value(self, value: Any) -> bool:
        return not self.choices or super().valid_value(value)


class QuestionForm(forms.Form):
    """A question, the binding to search and the composer to answer with."""

    question = forms.CharField(
        max_length=MAX_QUESTION_CHARS,
        widget=forms.Textarea(attrs={"rows": 3, "data-field": "question", "autofocus": True}),
        error_messages={"required": "Enter a question."},
    )
    binding = _OfferedChoiceField(
        widget=forms.RadioSelect(attrs={"data-field": "binding"}),
        error_messages={"required": "Choose a source.", "invalid_choice": "Choose one of your sources."},
    )
    composer = _OfferedChoiceField(
        required=False,
        label="Answer with",
        widget=forms.Select(attrs={"data-field": "composer"}),
        error_messages={"invalid_choice": "Choose one of your answer models."},
    )

    def __init__(
        self,
        data: Any = None,
        *,
        bindings: list[tuple[str, str]] | None = None,
        composers: list[tuple[str, str]] | None = None,
    ) -> None:
        super().__init__(data)
        self.fields["binding"].choices = bindings or []  # type: ignore[attr-defined]
        self.fields["composer"].choices = composers or []  # type: ignore[attr-defined]
        if bindings and len(bindings) == 1:
            self.fields["binding"].initial = bindings[0][0]

    def error(self) -> tuple[str, str]:
        """The first problem and the part of the request it is in (``question`` or ``binding``)."""
        for field in ("question", "binding", "composer"):
            if self.errors.get(field):
                return str(self.errors[field][0]), "question" if field == "question" else "binding"
        return "The form is not valid.", "question"
