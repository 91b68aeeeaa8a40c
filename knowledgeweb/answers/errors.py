"""Why a question could not be answered; every message is safe to show."""

from __future__ import annotations

from typing import ClassVar, Literal

from knowledgeweb.errors import DomainError

AnswerErrorKind = Literal["question", "binding", "provider", "quota"]


class AnswerError(DomainError):
    """Nothing was written. ``kind`` says which part of the request failed, and sets code and status.

    A bad question is invalid content (422), a binding or answer model the caller may
    not use is forbidden (403), a failed search a failed dependency (424), a quota 413:
    the same on the API, the Ask page, the follow-up form and the streams.
    """

    code = "ask_question"
    status = 422
    codes: ClassVar[dict[str, int]] = {
        "ask_question": 422,
        "ask_binding": 403,
        "ask_provider": 424,
        "ask_quota": 413,
    }

    def __init__(self, message: str, *, kind: AnswerErrorKind) -> None:
        super().__init__(message, code=f"ask_{kind}")
        self.kind = kind
