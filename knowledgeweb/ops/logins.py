"""Failed sign-ins per client address, on the site's login page and the admin's.

Only failures count (Django's ``user_login_failed`` signal), so people who sign in
normally never meet the limit; once an address has used it, every sign-in attempt
from it answers 429 with ``Retry-After`` until the window ends, right or wrong
password, which is what stops guessing.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.contrib.auth.signals import user_login_failed
from django.http import HttpRequest, HttpResponse
from django.urls import NoReverseMatch, get_script_prefix, get_urlconf, reverse

from knowledgeweb.ops import ratelimit
from knowledgeweb.ops.clients import client_address

SCOPE = "login_failure"


def _login_failed(
    sender: object, credentials: dict[str, Any], request: HttpRequest | None = None, **_: Any
) -> None:
    if request is not None:
        ratelimit.record(SCOPE, client_address(request))


def connect() -> None:
    user_login_failed.connect(_login_failed, dispatch_uid="knowledgeweb.ops.logins")


def _login_paths() -> frozenset[str]:
    # Two reversals on every POST (each API write, each search) cost more than the rest of
    # this middleware; the paths change only with the URL configuration and the script prefix.
    return _login_paths_in(get_urlconf() or settings.ROOT_URLCONF, get_script_prefix())


@lru_cache(maxsize=16)
def _login_paths_in(urlconf: Any, prefix: str) -> frozenset[str]:
    paths = set()
    for name in ("login", "admin:login"):
        try:
            paths.add(reverse(name, urlconf=urlconf))
        except NoReverseMatch:
            continue
    return frozenset(paths)


class LoginRateLimitMiddleware:
    """Answer 429 to sign-in attempts from an address that has used its failures."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST" and request.path in _login_paths():
            try:
                ratelimit.check(SCOPE, client_address(request))
            except ratelimit.RateLimited as exc:
                response = HttpResponse(
                    exc.detail + "\n", status=429, content_type="text/plain; charset=utf-8"
                )
                response["Retry-After"] = str(exc.retry_after)
                return response
        return self.get_response(request)
