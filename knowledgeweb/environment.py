"""Typed readers for configuration taken from the environment.

Each helper raises ``ImproperlyConfigured`` with the variable's name when a
value is malformed, so a bad deployment fails at start-up with a clear message
instead of misbehaving later.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str | None = None, *, environ: Mapping[str, str] | None = None) -> str | None:
    """Return the variable's value, or ``default`` when it is unset."""
    source = os.environ if environ is None else environ
    return source.get(name, default)


def env_bool(name: str, default: bool = False, *, environ: Mapping[str, str] | None = None) -> bool:
    """Read a boolean written as 1/0, true/false, yes/no or on/off."""
    raw = env_str(name, environ=environ)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false, yes/no, on/off), not {raw!r}.")


def env_list(name: str, default: list[str], *, environ: Mapping[str, str] | None = None) -> list[str]:
    """Read a comma-separated list; blank items are an error, not silently dropped."""
    raw = env_str(name, environ=environ)
    if raw is None:
        return list(default)
    items = [item.strip() for item in raw.split(",")]
    if any(not item for item in items):
        raise ImproperlyConfigured(f"{name} must be a comma-separated list with no empty items, not {raw!r}.")
    return items


def env_int(
    name: str,
    default: int,
    *,
    minimum: int = 0,
    maximum: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Read a whole number within ``minimum``..``maximum`` (``_`` separators allowed: ``536_870_912``).

    Unset or blank means ``default``.
    """
    raw = env_str(name, environ=environ)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {raw!r}.") from None
    if value < minimum or (maximum is not None and value > maximum):
        upper = f" and at most {maximum}" if maximum is not None else ""
        raise ImproperlyConfigured(f"{name} must be at least {minimum}{upper}, not {value}.")
    return value


def env_float(
    name: str,
    default: float,
    *,
    minimum: float = 0.0,
    maximum: float | None = None,
    environ: Mapping[str, str] | None = None,
) -> float:
    """Read a finite number of seconds (or any positive quantity) within bounds."""
    raw = env_str(name, environ=environ)
    if raw is None:
        return default
    try:
        value = float(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, not {raw!r}.") from None
    if not math.isfinite(value) or value <= minimum or (maximum is not None and value > maximum):
        upper = f" and at most {maximum:g}" if maximum is not None else ""
        raise ImproperlyConfigured(f"{name} must be more than {minimum:g}{upper}, not {raw!r}.")
    return value


def env_choice(
    name: str, choices: tuple[str, ...], default: str, *, environ: Mapping[str, str] | None = None
) -> str:
    """Read one of ``choices`` (case-insensitive); the result is spelled as in ``choices``."""
    raw = env_str(name, environ=environ)
    if raw is None:
        return default
    for choice in choices:
        if raw.strip().lower() == choice.lower():
            return choice
    raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}, not {raw!r}.")


_HEADER_NAME = re.compile(r"[A-Za-z0-9-]+")


def env_proxy_ssl_header(name: str, *, environ: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """Read the header a TLS-terminating proxy sets on HTTPS requests, as Django wants it.

    ``X-Forwarded-Proto`` means that header with the value ``https``; ``Name=value``
    names another value. Unset (the default) trusts no header: only opt in behind a
    proxy that always sets or strips it, or any client could claim HTTPS.
    """
    raw = env_str(name, environ=environ)
    if raw is None or not raw.strip():
        return None
    header, _, value = raw.strip().partition("=")
    value = value.strip() or "https"
    if not _HEADER_NAME.fullmatch(header.strip()):
        raise ImproperlyConfigured(
            f"{name} must be a header name such as X-Forwarded-Proto (optionally =value), not {raw!r}."
        )
    return "HTTP_" + header.strip().upper().replace("-", "_"), value


def database_from_url(url: str, *, base_dir: str, conn_max_age: int = 0) -> dict[str, Any]:
    """Translate ``DATABASE_URL`` into a Django ``DATABASES['default']`` entry.

    Accepted: ``sqlite:///relative/or/absolute.sqlite3`` and
    ``postgres://`` / ``postgresql://user:password@host:port/name``. PostgreSQL
    URLs are parsed by dj-database-url (query options such as ``sslmode`` become
    connection options); ``conn_max_age`` keeps connections open between requests
    (with a health check before reuse) and is 0 (close after each request) unless
    the production server asks for more.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "sqlite":
        path = unquote(parts.path)
        if path.startswith("/") and not parts.netloc:
            path = path[1:]
        if not path:
            raise ImproperlyConfigured(
                "DATABASE_URL for SQLite must name a file, e.g. sqlite:///var/db.sqlite3."
            )
        if path != ":memory:" and not os.path.isabs(path):
            path = os.path.join(base_dir, path)
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": path}
    if scheme in {"postgres", "postgresql"}:
        name = unquote(parts.path.lstrip("/"))
        if not name:
            raise ImproperlyConfigured(
                "DATABASE_URL for PostgreSQL must name a database, e.g. postgres://host/db."
            )
        try:
            parts.port  # noqa: B018 - dj-database-url would not say which part is wrong
        except ValueError as exc:
            raise ImproperlyConfigured(f"DATABASE_URL has an invalid port: {exc}.") from exc
        config: dict[str, Any] = dict(
            dj_database_url.parse(url, conn_max_age=conn_max_age, conn_health_checks=conn_max_age > 0)
        )
        config["ENGINE"] = "django.db.backends.postgresql"
        config["PORT"] = str(config.get("PORT") or "")
        options = config.setdefault("OPTIONS", {})
        # A database that does not answer must fail a request (and /readyz) quickly,
        # not after the operating system's TCP timeout.
        options.setdefault("connect_timeout", 5)
        return config
    raise ImproperlyConfigured(
        f"DATABASE_URL must start with sqlite:// or postgres://, not {scheme + '://' if scheme else repr(url)}."
    )


def cache_from_url(url: str, *, timeout: float = 0.2) -> dict[str, Any]:
    """Translate ``CACHE_URL`` into a Django ``CACHES['default']`` entry.

    ``locmem://`` (the default) keeps the cache in the process; ``redis://`` and
    ``rediss://`` share it between workers.
    """
    scheme = urlsplit(url).scheme.lower()
    if scheme == "locmem":
        return {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "knowledgeweb",
            # Django's default of 300 entries would evict a long thread's memoized
            # evidence and fragments before its next render (docs/architecture.md#performance).
            "OPTIONS": {"MAX_ENTRIES": 100_000},
        }
    if scheme in {"redis", "rediss"}:
        # Short socket timeouts, no retries, and a pause after a failure: a hung Redis
        # costs a request one timeout, then the app runs without the cache (ops/cache.py).
        return {
            "BACKEND": "knowledgeweb.ops.cache.ResilientRedisCache",
            "LOCATION": url,
            "OPTIONS": {"socket_timeout": timeout, "socket_connect_timeout": timeout},
        }
    raise ImproperlyConfigured(f"CACHE_URL must start with locmem:// or redis://, not {url!r}.")


_PERIODS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}
_RATE = re.compile(r"\s*(\d+)\s*/\s*(\d*)\s*(second|minute|hour|day)s?\s*", re.IGNORECASE)


def env_rate(name: str, default: str, *, environ: Mapping[str, str] | None = None) -> tuple[int, int] | None:
    """Read a rate limit ``N/period`` (``30/minute``, ``5/10second``) as ``(N, seconds)``.

    ``off`` disables the limit (``None``). The default is parsed like a value, so it
    is spelled the way docs/operations.md documents it.
    """
    raw = env_str(name, environ=environ)
    text = default if raw is None else raw
    if text.strip().lower() == "off":
        return None
    match = _RATE.fullmatch(text)
    if match is None or int(match.group(1)) < 1 or match.group(2) == "0":
        raise ImproperlyConfigured(
            f"{name} must be a rate such as 30/minute, 5/10second or 1000/hour (or off), not {text!r}."
        )
    count, multiple, period = int(match.group(1)), int(match.group(2) or 1), match.group(3).lower()
    return count, multiple * _PERIODS[period]
