"""Errors a provider call can raise, each with a stable ``code`` by kind.

Every message is written for the person or model reading the tool result, and
is already redacted when it is raised: ``str(exc)`` is safe to store, log and show.
The codes travel in API error bodies, in error tool messages' artifacts and in the
OpenAPI schema; docs/decisions/0012-provider-error-codes-by-kind.md says why
this set and what a caller should do about each.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from knowledgeweb.errors import DomainError


class ProviderErrorCode(StrEnum):
    """Why a provider call failed, for a caller to act on without reading the message."""

    #: The binding's timeout (one deadline for the whole search) ran out.
    TIMEOUT = "provider_timeout"
    #: No connection: name resolution, connect or TLS failed, or the connection dropped.
    UNREACHABLE = "provider_unreachable"
    #: The provider rejected the credential.
    AUTH = "provider_auth"
    #: The provider answered HTTP 429.
    RATE_LIMITED = "provider_rate_limited"
    #: The provider answered HTTP 5xx.
    SERVER_ERROR = "provider_server_error"
    #: The answer was not what the provider documents (malformed JSON, wrong shape, odd status).
    BAD_RESPONSE = "provider_bad_response"
    #: The provider understood the request and refused it (an error code, a validation error,
    #: a selection that failed its checks).
    REJECTED = "provider_rejected"
    #: The provider answered with a redirect, which is never followed.
    REDIRECT_REFUSED = "provider_redirect_refused"
    #: The answer passed the 4 MiB cap (or was compressed); reading stopped.
    TOO_LARGE = "provider_too_large"
    #: The binding cannot be used as configured; nothing was sent.
    MISCONFIGURED = "provider_misconfigured"
    #: An unexpected failure inside this project's adapter (a bug); the traceback is logged.
    ADAPTER_ERROR = "provider_adapter_error"


class ProviderError(DomainError):
    """A provider call failed. The message is redacted and safe to show.

    Status 424 (Failed Dependency) on any surface it reaches, as ``RetrievalFailedError``
    that carries its code when no thread records the failure.
    """

    code: ProviderErrorCode = ProviderErrorCode.BAD_RESPONSE
    status = 424
    codes: ClassVar[dict[str, int]] = {member.value: 424 for member in ProviderErrorCode}

    def __init__(self, message: str, *, code: ProviderErrorCode | None = None) -> None:
        super().__init__(message, code=code)

    @property
    def kind(self) -> str:
        """The code as a plain string (for logs)."""
        return self.code.value


class ProviderConfigurationError(ProviderError):
    """The connection cannot be used as configured; no request was sent."""

    code = ProviderErrorCode.MISCONFIGURED


class MissingCredentialError(ProviderConfigurationError):
    """The environment variable a binding names is unset or empty; no request was sent."""


class ProviderAuthError(ProviderError):
    """The provider rejected the credential."""

    code = ProviderErrorCode.AUTH


class ProviderTimeoutError(ProviderError):
    """The search's deadline (the binding's timeout) passed."""

    code = ProviderErrorCode.TIMEOUT


class ProviderUnavailableError(ProviderError):
    """The provider could not be reached at all, or the connection failed mid-answer."""

    code = ProviderErrorCode.UNREACHABLE


class ProviderRateLimitedError(ProviderError):
    """The provider answered HTTP 429."""

    code = ProviderErrorCode.RATE_LIMITED


class ProviderRedirectError(ProviderError):
    """The provider answered with a redirect, which is never followed."""

    code = ProviderErrorCode.REDIRECT_REFUSED


class ResponseTooLargeError(ProviderError):
    """The response body passed the size cap; reading stopped there."""

    code = ProviderErrorCode.TOO_LARGE


class MalformedResponseError(ProviderError):
    """The response was not the JSON shape the provider documents."""

    code = ProviderErrorCode.BAD_RESPONSE


class ProviderHTTPError(ProviderError):
    """The provider answered with an unexpected HTTP status: 5xx is a server error, anything else a bad response."""

    codes: ClassVar[dict[str, int]] = {
        ProviderErrorCode.SERVER_ERROR.value: 424,
        ProviderErrorCode.BAD_RESPONSE.value: 424,
    }

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(
            message,
            code=ProviderErrorCode.SERVER_ERROR if status >= 500 else ProviderErrorCode.BAD_RESPONSE,
        )
        #: The provider's HTTP status (``status`` is this error's own, as for every domain error).
        self.upstream_status = status


class ProviderRejectedError(ProviderError):
    """The provider refused the request (an error code or a validation error)."""

    code = ProviderErrorCode.REJECTED


class ScopeRejectedError(ProviderError):
    """The selected datasets or documents failed validation; nothing was searched."""

    code = ProviderErrorCode.REJECTED


class UnsupportedToolError(ProviderError):
    """The adapter does not offer the requested tool."""

    code = ProviderErrorCode.MISCONFIGURED
