"""Errors a provider call can raise.

Every message is written for the person or model reading the tool result, and
is already redacted when it is raised: ``str(exc)`` is safe to store, log and show.
"""

from __future__ import annotations


class ProviderError(Exception):
    """A provider call failed. The message is redacted and safe to show."""

    #: A stable machine-readable kind for API errors and logs.
    kind = "provider_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ProviderConfigurationError(ProviderError):
    """The connection cannot be used as configured; no request was sent."""

    kind = "configuration"


class MissingCredentialError(ProviderConfigurationError):
    """The environment variable a binding names is unset or empty; no request was sent."""

    kind = "missing_credential"


class ProviderAuthError(ProviderError):
    """The provider rejected the credential."""

    kind = "authentication"


class ProviderTimeoutError(ProviderError):
    """The provider did not answer within the binding's timeout."""

    kind = "timeout"


class ProviderUnavailableError(ProviderError):
    """The provider could not be reached at all."""

    kind = "unavailable"


class ProviderRedirectError(ProviderError):
    """The provider answered with a redirect, which is never followed."""

    kind = "redirect"


class ResponseTooLargeError(ProviderError):
    """The response body passed the size cap; reading stopped there."""

    kind = "response_too_large"


class MalformedResponseError(ProviderError):
    """The response was not the JSON shape the provider documents."""

    kind = "malformed_response"


class ProviderHTTPError(ProviderError):
    """The provider answered with an unexpected HTTP status."""

    kind = "http_error"


class ProviderRejectedError(ProviderError):
    """The provider refused the request (an error code or a validation error)."""

    kind = "rejected"


class ScopeRejectedError(ProviderError):
    """The selected datasets or documents failed validation; nothing was searched."""

    kind = "scope_rejected"


class UnsupportedToolError(ProviderError):
    """The adapter does not offer the requested tool."""

    kind = "unsupported_tool"
