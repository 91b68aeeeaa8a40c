"""Typed readers for configuration taken from the environment.

Each helper raises ``ImproperlyConfigured`` with the variable's name when a
value is malformed, so a bad deployment fails at start-up with a clear message
instead of misbehaving later.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

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


def env_int(name: str, default: int, *, minimum: int = 1, environ: Mapping[str, str] | None = None) -> int:
    """Read a whole number of at least ``minimum`` (``_`` separators allowed: ``536_870_912``)."""
    raw = env_str(name, environ=environ)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {raw!r}.") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, not {value}.")
    return value


def env_list(name: str, default: list[str], *, environ: Mapping[str, str] | None = None) -> list[str]:
    """Read a comma-separated list; blank items are an error, not silently dropped."""
    raw = env_str(name, environ=environ)
    if raw is None:
        return list(default)
    items = [item.strip() for item in raw.split(",")]
    if any(not item for item in items):
        raise ImproperlyConfigured(f"{name} must be a comma-separated list with no empty items, not {raw!r}.")
    return items


def database_from_url(url: str, *, base_dir: str) -> dict[str, Any]:
    """Translate ``DATABASE_URL`` into a Django ``DATABASES['default']`` entry.

    Accepted: ``sqlite:///relative/or/absolute.sqlite3`` and
    ``postgres://`` / ``postgresql://user:password@host:port/name``.
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
            port = parts.port
        except ValueError as exc:
            raise ImproperlyConfigured(f"DATABASE_URL has an invalid port: {exc}.") from exc
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": name,
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(port or ""),
            "OPTIONS": dict(parse_qsl(parts.query)),
            "CONN_MAX_AGE": 60,
            "CONN_HEALTH_CHECKS": True,
        }
    raise ImproperlyConfigured(
        f"DATABASE_URL must start with sqlite:// or postgres://, not {scheme + '://' if scheme else repr(url)}."
    )


def cache_from_url(url: str) -> dict[str, Any]:
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
            # evidence and fragments before its next render (SPEC §10).
            "OPTIONS": {"MAX_ENTRIES": 100_000},
        }
    if scheme in {"redis", "rediss"}:
        return {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}
    raise ImproperlyConfigured(f"CACHE_URL must start with locmem:// or redis://, not {url!r}.")


def env_bounded_int(
    name: str, default: int, *, minimum: int, maximum: int, environ: Mapping[str, str] | None = None
) -> int:
    """Read a whole number within ``minimum..maximum``; anything else stops start-up with a clear message."""
    raw = env_str(name, environ=environ)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {raw!r}.") from None
    if not minimum <= value <= maximum:
        raise ImproperlyConfigured(f"{name} must be from {minimum} to {maximum}, not {value}.")
    return value
