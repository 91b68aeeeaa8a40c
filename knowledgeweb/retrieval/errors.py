"""What the retrieval service refuses, and how a caller should read it.

Each error is a ``DomainError`` (``knowledgeweb.errors``): a stable ``code`` and the HTTP
``status`` every surface answers with. ``codes`` lists the precise codes each class's
instances carry. Every message is safe to show: it names bindings, tools and variables,
never a value.
"""

from __future__ import annotations

from knowledgeweb.errors import DomainError
from knowledgeweb.providers.errors import ProviderErrorCode


class RetrievalError(DomainError):
    code = "retrieval_error"
    status = 400


class RetrievalInvalidError(RetrievalError):
    """The request itself is wrong, whoever sends it (400). No request was sent upstream."""

    code = "invalid_request"
    status = 400
    codes = {
        "invalid_request": 400,
        "binding_ambiguous": 400,
        "scope_not_supported": 400,
        "invalid_scope": 400,
    }


class RetrievalRefusedError(RetrievalError):
    """The caller may not run this retrieval (403). No request was sent upstream."""

    code = "forbidden"
    status = 403
    codes = {
        "forbidden": 403,
        "binding_unavailable": 403,
        "binding_misconfigured": 403,
        "credential_missing": 403,
        "scope_forbidden": 403,
    }


class RetrievalModeError(RetrievalError):
    """The search named a query mode its binding does not allow (422). No request was sent upstream."""

    code = "mode_not_allowed"
    status = 422
    codes = {"mode_not_allowed": 422, "mode_not_supported": 422}


class RetrievalFailedError(RetrievalError):
    """The provider failed and there was no thread to record it in (424 Failed Dependency).

    A 4xx because docs/architecture.md#http-api answers every error with one; 424 says the request
    failed because the upstream call it depended on did. ``code`` says which way
    it failed (``ProviderErrorCode``: provider_timeout, provider_auth, ...).
    """

    code = "provider_bad_response"
    status = 424
    codes = {member.value: 424 for member in ProviderErrorCode}
