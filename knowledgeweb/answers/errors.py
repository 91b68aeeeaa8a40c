"""Why a question could not be answered; every message is safe to show."""

from __future__ import annotations

from typing import Literal

AnswerErrorKind = Literal["question", "binding", "provider", "quota"]


class AnswerError(Exception):
    """Nothing was written. ``kind`` says which part of the request failed."""

    def __init__(self, message: str, *, kind: AnswerErrorKind) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind

    def __str__(self) -> str:
        return self.message
