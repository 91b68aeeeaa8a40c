"""API authentication: a browser session or ``Authorization: Bearer <token>`` (docs/architecture.md#http-api).

Routers use ``api_auth`` (the NinjaAPI applies it to every operation). Handlers
read the caller with ``request_user(request)``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.http import HttpRequest
from ninja.errors import AuthenticationError, HttpError
from ninja.security import APIKeyCookie, HttpBearer
from ninja.utils import check_csrf

from knowledgeweb.accounts.services import token_authenticate
from knowledgeweb.accounts.tokens import token_digest
from knowledgeweb.ops import ratelimit
from knowledgeweb.ops.clients import client_address

#: Failed token checks per client address (``RATE_LIMIT_TOKEN_FAILURES``).
TOKEN_FAILURES = "token_failure"  # noqa: S105 - a limit scope, not a secret


class InvalidTokenError(AuthenticationError):
    """A bearer token was sent but names no active token of an active user."""

    def __init__(self) -> None:
        super().__init__(message="Invalid or revoked API token.")


class BearerTokenAuth(HttpBearer):
    """Personal API tokens; only their SHA-256 digest is stored."""

    def __call__(self, request: HttpRequest) -> Any:
        # Unlike ninja's HttpBearer, never log the header: it is a credential.
        value = request.headers.get(self.header)
        if not value:
            return None
        scheme, _, token = value.partition(" ")
        if scheme.lower() != self.openapi_scheme:
            return None
        return self.authenticate(request, token.strip())

    def authenticate(self, request: HttpRequest, token: str) -> User:
        # A token that matches is always accepted: failures are counted per address on the
        # failure path only, so nobody can lock a token's owner out by sending wrong tokens
        # from (or, behind a proxy, as) the same address. Tokens are long random secrets,
        # so this gives up nothing against guessing (docs/decisions/0037-api-surface-limits-text-and-openapi.md).
        user = token_authenticate(raw_token=token)
        if user is None:
            # Counted atomically, and refused past the limit (429, Retry-After): a client
            # sending wrong tokens in a loop is slowed, whoever else shares its address.
            ratelimit.consume(TOKEN_FAILURES, client_address(request))
            # A wrong token must not fall through to the session: say so plainly.
            raise InvalidTokenError()
        return user


class SessionCookieAuth(APIKeyCookie):
    """Django's session, for the browser. Unsafe methods need the CSRF token.

    ninja's own ``SessionAuth`` checks CSRF before looking at the user, so a
    request with neither session nor token would answer 403 instead of 401.
    """

    param_name = settings.SESSION_COOKIE_NAME

    def _get_key(self, request: HttpRequest) -> str | None:
        return request.COOKIES.get(self.param_name)

    def authenticate(self, request: HttpRequest, key: str | None) -> User | None:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        if self.csrf and not getattr(request, "_ninja_csrf_exempt", False) and check_csrf(request):
            raise HttpError(403, "CSRF check failed: session requests must send the X-CSRFToken header.")
        return user


#: The authentication every API operation uses: a token first, then the session.
api_auth = [BearerTokenAuth(), SessionCookieAuth()]


def rate_limit_key(request: HttpRequest) -> str:
    """Whom a per-caller rate limit counts: the bearer token itself, else the session's user."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return "token:" + token_digest(token.strip())
    return f"user:{request_user(request).pk}"


def rate_limit(request: HttpRequest, scope: str) -> None:
    """Count this request against the caller's ``scope`` limit (``"search"``, ``"ask"``,
    ``"write"``); 429 past it."""
    ratelimit.consume(scope, rate_limit_key(request))


def request_user(request: HttpRequest) -> User:
    """The user an authenticated API request acts for."""
    user = getattr(request, "auth", None)
    if not isinstance(user, User):
        raise AuthenticationError()
    return user
