"""How the production server is sized and bound, from the environment.

The sizing rule (docs/operations.md#serving-in-production):

- ``WEB_WORKERS`` processes, default one per CPU core (at least 2): rendering and
  JSON are CPU work, and only processes run Python in parallel.
- ``WEB_THREADS`` threads per worker, default 8: views are synchronous and each
  in-flight request holds a thread, so a search waiting on a slow provider (up to
  its deadline) holds one thread, not a process. Capacity is workers x threads
  requests in flight; size threads so the searches you expect in flight at once
  stay under half of it.
- ``WEB_TIMEOUT`` seconds, default ``KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING`` + 30, and never at or
  below the ceiling: gunicorn restarts a worker that stops reporting for that long,
  and a restart (or a graceful reload) must not cut a search still inside its
  deadline.
- PostgreSQL keeps one connection per thread (``DB_CONN_MAX_AGE``, 60 s under
  gunicorn): workers x threads must stay below the server's ``max_connections``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured

from knowledgeweb.environment import env_int, env_str


def missing_settings(environ: Mapping[str, str] | None = None) -> list[str]:
    """What the production server cannot start without, as sentences (none: it may start)."""
    env = os.environ if environ is None else environ
    missing = []
    if not (env.get("ALLOWED_HOSTS") or "").strip():
        missing.append(
            "ALLOWED_HOSTS is not set. Set it to the host names this server answers to, comma-separated "
            "(for example ALLOWED_HOSTS=kw.example.org); without it every request would be refused "
            "with 400 Bad Request."
        )
    if not (env.get("SECRET_KEY") or "").strip():
        missing.append("SECRET_KEY is not set. Set it to a long random secret.")
    return missing


@dataclass(frozen=True)
class ServerSettings:
    host: str
    port: int
    workers: int
    threads: int
    timeout: int
    graceful_timeout: int

    @property
    def capacity(self) -> int:
        return self.workers * self.threads


def server_settings(
    environ: Mapping[str, str] | None = None, *, cpu_count: int | None = None
) -> ServerSettings:
    env = os.environ if environ is None else environ
    cores = cpu_count if cpu_count is not None else (os.cpu_count() or 1)
    # The same variable, read the same way, as the binding rules' ceiling (settings.py).
    ceiling = env_int("KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING", 60, minimum=1, maximum=120, environ=env)
    default_timeout = int(ceiling) + 30
    timeout = env_int("WEB_TIMEOUT", default_timeout, minimum=1, environ=env)
    if timeout <= ceiling:
        raise ImproperlyConfigured(
            f"WEB_TIMEOUT ({timeout} s) must exceed KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING ({ceiling} s): "
            "gunicorn would restart workers in the middle of searches that are still within their deadline."
        )
    host = (env_str("HOST", environ=env) or "127.0.0.1").strip()
    if not host or any(c.isspace() for c in host):
        raise ImproperlyConfigured(f"HOST must be an address to listen on, not {host!r}.")
    return ServerSettings(
        host=host,
        port=env_int("PORT", 8000, minimum=1, maximum=65535, environ=env),
        workers=env_int("WEB_WORKERS", max(2, cores), minimum=1, maximum=64, environ=env),
        threads=env_int("WEB_THREADS", 8, minimum=1, maximum=256, environ=env),
        timeout=timeout,
        graceful_timeout=timeout,
    )
