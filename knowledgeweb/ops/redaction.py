"""Keep passwords out of DEBUG's error page, error reports and log lines.

Two sources of leaks: URLs with credentials (``DATABASE_URL``, ``CACHE_URL``, a
provider's base URL, in a setting, the environment a development server copies
into ``request.META``, a frame's local variable or an exception message), and the
decoded passwords themselves (``DATABASES['default']['PASSWORD']`` shows up in a
driver's connection string). ``redact()`` replaces the password part of every
``scheme://user:password@`` and every configured password wherever it appears; the
reporter runs it over the whole rendered page, so nothing Django adds escapes it.
"""

from __future__ import annotations

import html
import os
import re
from functools import lru_cache
from typing import Any
from urllib.parse import unquote, urlsplit

from django.conf import settings
from django.utils.safestring import SafeString, mark_safe
from django.views.debug import ExceptionReporter, SafeExceptionReporterFilter

MASK = "********"

# scheme://user:password@host — a password holding "@" or "/" must be percent-encoded.
_URL_CREDENTIALS = re.compile(r"(?P<prefix>\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@'\"<>]*:)[^\s/@'\"<>]+@")
# Passwords shorter than this are not hunted for in free text: too many false hits.
_MIN_SECRET = 4
_SECRET_VARIABLES = ("DATABASE_URL", "CACHE_URL")


def _passwords_in(url: str | None) -> set[str]:
    if not url:
        return set()
    try:
        password = urlsplit(url).password
    except ValueError:
        return set()
    return {password, unquote(password)} if password else set()


@lru_cache(maxsize=8)
def _known_secrets(sources: tuple[str | None, ...]) -> tuple[str, ...]:
    found: set[str] = set()
    for source in sources:
        found |= _passwords_in(source)
    found |= {html.escape(secret) for secret in found}
    return tuple(sorted((s for s in found if len(s) >= _MIN_SECRET), key=len, reverse=True))


def known_secrets() -> tuple[str, ...]:
    """The configured passwords (and their HTML-escaped forms), longest first."""
    sources: list[str | None] = [os.environ.get(name) for name in _SECRET_VARIABLES]
    if settings.configured:
        for database in getattr(settings, "DATABASES", {}).values():
            password = database.get("PASSWORD")
            if password:
                sources.append(f"x://u:{password}@h")
        for cache in getattr(settings, "CACHES", {}).values():
            sources.append(str(cache.get("LOCATION", "")))
    return _known_secrets(tuple(sources))


def redact(text: str) -> str:
    """``text`` with URL passwords and configured passwords replaced by ``********``."""
    if not text:
        return text
    text = _URL_CREDENTIALS.sub(lambda m: f"{m.group('prefix')}{MASK}@", text)
    for secret in known_secrets():
        if secret in text:
            text = text.replace(secret, MASK)
    return text


class RedactingReporterFilter(SafeExceptionReporterFilter):
    """Django's filter, also hiding the URL settings and variables that hold passwords."""

    hidden_settings = re.compile(
        r"API|AUTH|TOKEN|KEY|SECRET|PASS|SIGNATURE|HTTP_COOKIE|DATABASE_URL|CACHE_URL", flags=re.IGNORECASE
    )

    def cleanse_setting(self, key: Any, value: Any) -> Any:
        cleansed = super().cleanse_setting(key, value)
        if isinstance(cleansed, str):
            return redact(cleansed)
        return cleansed

    def get_traceback_frame_variables(self, request: Any, tb_frame: Any) -> Any:
        variables = super().get_traceback_frame_variables(request, tb_frame)
        return [(name, _redacted_value(value)) for name, value in variables]


def _redacted_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    return value


class RedactingExceptionReporter(ExceptionReporter):
    """DEBUG's technical 500 page and error e-mails, with every password masked."""

    def get_traceback_html(self) -> SafeString:
        # The page was escaped by its template; masking a password keeps it safe.
        return mark_safe(redact(super().get_traceback_html()))  # noqa: S308

    def get_traceback_text(self) -> SafeString:
        return mark_safe(redact(super().get_traceback_text()))  # noqa: S308
