"""Why an answer model produced no answer: a stable code and a message safe to store and show."""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from knowledgeweb.errors import DomainError


class ModelFault(StrEnum):
    """Every recorded outcome of a turn whose model did not deliver a complete answer."""

    TIMEOUT = "model_timeout"
    AUTH = "model_auth"
    NOT_FOUND = "model_not_found"
    RATE_LIMITED = "model_rate_limited"
    SERVER_ERROR = "model_server_error"
    REJECTED = "model_rejected"
    UNREACHABLE = "model_unreachable"
    REDIRECT_REFUSED = "model_redirect_refused"
    TOO_LARGE = "model_too_large"
    BAD_RESPONSE = "model_bad_response"
    STREAM_TRUNCATED = "model_stream_truncated"
    LENGTH_LIMIT = "model_length_limit"
    EMPTY_ANSWER = "model_empty_answer"
    CONTEXT_OVER_BUDGET = "context_over_budget"
    MISCONFIGURED = "model_misconfigured"


class ModelError(DomainError):
    """The model call failed; ``str(exc)`` is redacted and safe to store, log and show.

    A turn records it as its outcome (the API's ``status: "failed"`` with this code), so it
    does not reach a surface as an error today; were it to, it is a failed dependency (424),
    as a provider's failure is.
    """

    code: ModelFault = ModelFault.BAD_RESPONSE
    status = 424
    codes: ClassVar[dict[str, int]] = {member.value: 424 for member in ModelFault}

    def __init__(self, code: ModelFault, message: str) -> None:
        super().__init__(message, code=code)
