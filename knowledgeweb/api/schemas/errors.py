"""The API's error bodies: one ``ErrorOut`` for every status, and the two that say more.

Every error the API answers is ``{"detail": ..., "code": ...}`` (``knowledgeweb.api.main``), so
one schema documents them all. A subclass exists only where its fields really differ: a
provider failure's ``code`` is one of a closed set, and a refused request body lists the
schema's findings.
"""

from __future__ import annotations

from typing import Any

from ninja import Field, Schema

from knowledgeweb.providers.errors import ProviderErrorCode


class ErrorOut(Schema):
    """An error: what went wrong, in words, and its stable code."""

    detail: str
    code: str = Field(
        description="A stable code: the domain error's own (e.g. thread_not_found, ask_binding, "
        "invalid_scope, verdict_invalid), else one per status (docs/architecture.md#errors)."
    )


class ProviderErrorOut(ErrorOut):
    """A provider failure with no thread to record it in (424). Its own schema because its
    ``code`` is one of the provider failure codes, which generated clients can read as an enum."""

    code: ProviderErrorCode = Field(
        description="Why the provider failed: provider_timeout (the binding's timeout, one deadline for "
        "the whole search, ran out), provider_unreachable, provider_auth (the key was rejected), "
        "provider_rate_limited (HTTP 429), provider_server_error (HTTP 5xx), provider_bad_response "
        "(not the documented answer), provider_rejected (the provider refused the query or selection), "
        "provider_redirect_refused, provider_too_large (over 4 MiB), provider_misconfigured, "
        "provider_adapter_error."
    )


class InvalidOut(ErrorOut):
    """A request refused as invalid (422). Its own schema because a body that fails the schema
    also lists the findings (``errors``); a query mode the binding refuses has the code
    mode_not_allowed or mode_not_supported, and nothing was sent upstream."""

    errors: list[dict[str, Any]] | None = Field(default=None, description="The schema's findings.")
