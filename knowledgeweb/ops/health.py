"""Health probes: ``/healthz`` (the process answers; no I/O) and ``/readyz``.

``/readyz`` asks the database, the cache (and the task broker, when one is set) to answer within ``READINESS_TIMEOUT``
seconds, each in a thread of its own so a hung server cannot hold the probe, and
answers 503 with the names of what failed (the reason goes to the log). The probes are answered by a middleware
placed before Django's host check and HTTPS redirect: a load balancer probes by IP
address over plain HTTP. Their bodies name components and error kinds, never a
host, a URL or a message that could carry one.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from django.conf import settings
from django.core.cache import cache
from django.db import connections
from django.http import HttpRequest, HttpResponse, JsonResponse

logger = logging.getLogger(__name__)

# Hung checks keep their thread until their own timeout (the database's
# connect_timeout, the cache's socket timeout) frees it; a few threads suffice.
_EXECUTOR = ThreadPoolExecutor(max_workers=4, thread_name_prefix="readyz")


def _check_database() -> None:
    # A worker thread has its own connection: open it, ask, close it.
    connection = connections["default"]
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    finally:
        connection.close()


def _check_cache() -> None:
    key = f"readyz:{uuid.uuid4().hex}"
    cache.set(key, "1", timeout=10)
    try:
        if cache.get(key) != "1":
            raise RuntimeError("the cache did not return what was stored")
    finally:
        cache.delete(key)


CHECKS: dict[str, Callable[[], None]] = {"database": _check_database, "cache": _check_cache}

#: Checks that apps above ops add (``check_register``), each with when it applies.
_REGISTERED: dict[str, tuple[Callable[[], None], Callable[[], bool]]] = {}


def check_register(name: str, check: Callable[[], None], *, enabled: Callable[[], bool]) -> None:
    """Add a readiness check from an app above ops (the jobs app: the task broker).

    Ops imports no app, so an app registers its own check from its ``ready()``; ``enabled``
    is asked on every probe (the broker is checked only while one is configured).
    """
    _REGISTERED[name] = (check, enabled)


def _checks() -> dict[str, Callable[[], None]]:
    extra = {name: check for name, (check, enabled) in _REGISTERED.items() if enabled()}
    return {**CHECKS, **extra}


def readiness() -> dict[str, str]:
    """Each component's state: ``ok``, ``no answer within N s`` or ``failed``.

    Which check failed is public (a load balancer acts on it); why is not: the error's
    kind goes to the log, never to whoever can reach the probe.
    """
    timeout = float(settings.READINESS_TIMEOUT)
    futures: dict[str, Future[None]] = {name: _EXECUTOR.submit(check) for name, check in _checks().items()}
    states: dict[str, str] = {}
    for name, future in futures.items():
        try:
            future.result(timeout=timeout)
        except FutureTimeout:
            states[name] = f"no answer within {timeout:g} s"
            logger.warning("Readiness check %r: no answer within %g s", name, timeout)
        except Exception as exc:
            states[name] = "failed"
            logger.warning("Readiness check %r failed (%s)", name, type(exc).__name__)
        else:
            states[name] = "ok"
    return states


def healthz(request: HttpRequest) -> HttpResponse:
    return JsonResponse({"status": "ok"})


def readyz(request: HttpRequest) -> HttpResponse:
    states = readiness()
    failed = [name for name, state in states.items() if state != "ok"]
    body = {"status": "unavailable" if failed else "ok", "failed": failed, "checks": states}
    response = JsonResponse(body, status=503 if failed else 200)
    response["Cache-Control"] = "no-store"
    return response


_PROBES: dict[str, Callable[[HttpRequest], HttpResponse]] = {"/healthz": healthz, "/readyz": readyz}


class HealthProbeMiddleware:
    """Answer ``GET``/``HEAD /healthz`` and ``/readyz`` before anything else runs."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        probe = _PROBES.get(request.path_info.rstrip("/"))
        if probe is not None and request.method in {"GET", "HEAD"}:
            return probe(request)
        return self.get_response(request)
