"""Why an answer model produced no answer: a stable code and a message safe to store and show."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import ClassVar

from knowledgeweb.errors import DomainError

#: What the message store refuses in text (threads/text.py): shown as U+FFFD in a fault's message.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
#: A fault's message quotes at most this much of what a model server said.
MAX_FAULT_CHARS = 2_000


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
    #: The answer passed the most characters a message may hold (MAX_PROSE_CHARS).
    ANSWER_TOO_LONG = "model_answer_too_long"
    #: The answer held text no database stores (a NUL, a lone surrogate).
    BAD_TEXT = "model_bad_text"
    #: A whole answer that would take the thread or its owner past a quota.
    ANSWER_OVER_QUOTA = "model_answer_over_quota"


class ModelError(DomainError):
    """The model call failed; ``str(exc)`` is redacted and safe to store, log and show.

    ``code`` is the stable outcome code (a ``ModelFault`` value). A turn records it as its
    outcome (the API's ``status: "failed"`` with this code), so it does not reach a surface
    as an error today; were it to, it is a failed dependency (424), as a provider's failure is.
    """

    code: ModelFault = ModelFault.BAD_RESPONSE
    status = 424
    codes: ClassVar[dict[str, int]] = {member.value: 424 for member in ModelFault}

    def __init__(self, code: ModelFault, message: str) -> None:
        # The message may quote the model server; whatever it sent, the message is storable.
        message = _UNSTORABLE.sub("\ufffd", message)
        if len(message) > MAX_FAULT_CHARS:
            message = message[: MAX_FAULT_CHARS - 1] + "…"
        super().__init__(message, code=code)
