"""What the retrieval service refuses, and how a caller should read it.

Each error carries the HTTP status the API answers with and a stable ``code``.
Every message is safe to show: it names bindings, tools and variables, never a value.
"""

from __future__ import annotations


class RetrievalError(Exception):
    status = 400
    code = "retrieval_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return self.message


class RetrievalInvalidError(RetrievalError):
    """The request itself is wrong, whoever sends it (400). No request was sent upstream."""

    status = 400
    code = "invalid_request"


class RetrievalRefusedError(RetrievalError):
    """The caller may not run this retrieval (403). No request was sent upstream."""

    status = 403
    code = "forbidden"


class RetrievalModeError(RetrievalError):
    """The search named a query mode its binding does not allow (422). No request was sent upstream."""

    status = 422
    code = "mode_not_allowed"


class RetrievalFailedError(RetrievalError):
    """The provider failed and there was no thread to record it in (424 Failed Dependency).

    A 4xx because docs/architecture.md#http-api answers every error with one; 424 says the request
    failed because the upstream call it depended on did. ``code`` says which way
    it failed (``ProviderErrorCode``: provider_timeout, provider_auth, ...).
    """

    status = 424
    code = "provider_bad_response"
