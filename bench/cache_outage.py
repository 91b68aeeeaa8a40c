"""What a hung Redis adds to a request: at most one socket timeout (target <= 0.25 s).

The measured request is a search, ``POST /api/knowledge/search`` with a bearer token against
the embedded local index: it counts against the search rate limit in the cache on every
request (``ops/ratelimit.py``; a valid token alone touches the cache on its failure path
only, decision 0037). The cache's calls are counted (``bench/counting_cache.py``); when the measured requests made none,
the bench fails instead of reporting a hung cache that costs nothing.

A local TCP listener accepts connections and never answers (a hung Redis). The same
request is made on three sides, taking turns in every round:

- without a cache: ``CACHE_URL`` points at a closed port, refused at once;
- hung, worst case: the hung listener, with this process's pause after a failure
  cleared before every request, so each request pays the timeout again;
- hung, steady state: the hung listener with the pause left alone (what requests
  see after the first one during an outage).

Prints medians, then the verdicts: the cache was called, and the worst case's added time.
"""

from __future__ import annotations

import os
import socket
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import finish, info, setup_django, verdict

ROUNDS = 15


def hung_listener() -> int:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            conn, _ = server.accept()
            held.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    return int(server.getsockname()[1])


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cache_at(port: int) -> dict[str, object]:
    return {
        "default": {
            "BACKEND": "bench.counting_cache.CountingRedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
            "OPTIONS": {"socket_timeout": 0.2, "socket_connect_timeout": 0.2},
        }
    }


def main() -> int:
    # Each side's searches count against the limit; the bench must not be refused (a 429).
    os.environ["RATE_LIMIT_SEARCH"] = "100000/minute"
    setup_django()
    import logging

    from django.contrib.auth.models import User
    from django.test import Client
    from django.test.utils import override_settings

    from bench.counting_cache import CountingRedisCache
    from knowledgeweb.accounts.services import token_create
    from knowledgeweb.bindings.services import binding_create
    from knowledgeweb.ops import cache as resilient

    logging.disable(logging.WARNING)  # the degradation is logged once per request here
    user = User.objects.create_user("bench", password="bench-password-1")
    binding_create(name="bench-local", provider="local", tools=["knowledge_search"], users=[user])
    _, token = token_create(user=user, name="bench")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    body = {"tool": "knowledge_search", "query": "how are citations verified?"}
    plain_static = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    hung, refused = hung_listener(), closed_port()
    sides = {
        "without a cache": (refused, True),
        "hung, worst case": (hung, True),
        "hung, steady state": (hung, False),
    }
    samples: dict[str, list[float]] = {name: [] for name in sides}
    calls: dict[str, int] = dict.fromkeys(sides, 0)
    with override_settings(STORAGES=plain_static, STATIC_ROOT=None):
        for _ in range(ROUNDS):
            for name, (port, reset) in sides.items():
                with override_settings(CACHES=cache_at(port)):
                    if reset:
                        resilient._PAUSES.clear()
                    before = CountingRedisCache.calls
                    start = time.perf_counter()
                    response = client.post("/api/knowledge/search", body, content_type="application/json")
                    samples[name].append(time.perf_counter() - start)
                    calls[name] += CountingRedisCache.calls - before
                    if response.status_code != 200:
                        print(f"could not measure: {name} answered {response.status_code}")
                        return 1
    base = statistics.median(samples["without a cache"])
    print(
        f"POST /api/knowledge/search with a bearer token (the local index), {ROUNDS} rounds, sides taking turns"
    )
    for name, values in samples.items():
        print(
            f"  {name:<22} median {statistics.median(values) * 1000:8.1f} ms   max {max(values) * 1000:8.1f} ms"
            f"   cache calls {calls[name]}"
        )
    worst = statistics.median(samples["hung, worst case"]) - base
    steady = statistics.median(samples["hung, steady state"]) - base
    # Without a call to the cache the figures below would measure nothing: that fails.
    verdict(
        "cache outage: cache calls per request on the measured route (hung, worst case)",
        calls["hung, worst case"] / ROUNDS,
        1.0,
        compare=">=",
        digits=1,
    )
    verdict(
        "cache outage: added by a hung cache, worst case (median)", worst * 1000, 250.0, unit=" ms", digits=0
    )
    info("added once the process has stepped aside (median)", steady * 1000, unit=" ms", digits=0)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
