"""A hung Redis costs a request one short timeout, then the app runs without the cache (and says so).

Counts, not times: the listener counts the connections it was asked for. The added
time is measured in bench/cache_outage.py.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.knowledge import RetrievalHit, RetrievalResult
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.services import message_append
from tests.integration.serving_support import HungListener, base_env, load_settings, run_python

pytestmark = pytest.mark.django_db


def hung_cache(settings: Any, port: int) -> None:
    settings.CACHES = {
        "default": {
            "BACKEND": "knowledgeweb.ops.cache.ResilientRedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
            "OPTIONS": {"socket_timeout": 0.2, "socket_connect_timeout": 0.2},
        }
    }


def test_writes_and_reads_go_on_without_a_hung_cache_and_the_degradation_is_logged(
    settings: Any, user: User, thread: Thread, append_retrieval: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # Renders are stored at write, so the cache is met where evidence is remembered: when a
    # tool message is written (its validated sources are kept) and read back for an answer.
    client = Client()
    client.force_login(user)
    with HungListener() as hung:
        hung_cache(settings, hung.port)
        hit = RetrievalHit(text="Alice founded Acme.", title="a.md")
        tool = append_retrieval(thread, RetrievalResult(provider="local", query="q", hits=(hit,)))
        handle = re.search(r"\(#(knowledge-source-[a-f0-9]{32})\)", tool.content)
        assert handle is not None
        message_append(
            thread=thread, type="ai", content=f"Alice [founded Acme](#user-content-{handle.group(1)})."
        )
        first = client.get(f"/threads/{thread.id}/")
        second = client.get(f"/threads/{thread.id}/")
        assert (first.status_code, second.status_code) == (200, 200)
        # The citation still resolves: validation ran afresh instead of coming from the cache.
        assert 'data-citation="resolved"' in first.content.decode()
        # One connection timed out; after it the process stopped asking.
        assert hung.accepted == 1
    assert "Cache unreachable (TimeoutError): running without it for 5 s" in caplog.text
    assert "Cache unavailable" in caplog.text


def test_redis_gets_short_timeouts_and_the_pause_from_the_environment() -> None:
    values = load_settings(
        base_env(DEBUG="1", CACHE_URL="redis://127.0.0.1:6379/3", CACHE_TIMEOUT="0.1", CACHE_RETRY_AFTER="9"),
        "CACHES",
        "CACHE_RETRY_AFTER",
    )
    assert values["CACHES"]["default"]["OPTIONS"] == {"socket_timeout": 0.1, "socket_connect_timeout": 0.1}
    assert values["CACHE_RETRY_AFTER"] == 9.0


def test_connections_close_after_each_request_unless_told_to_persist() -> None:
    url = "postgres://kw@127.0.0.1:5432/kw"
    plain = load_settings(base_env(DEBUG="1", DATABASE_URL=url), "DATABASES")["DATABASES"]["default"]
    served = load_settings(base_env(DEBUG="1", DATABASE_URL=url, DB_CONN_MAX_AGE="60"), "DATABASES")
    assert (plain["CONN_MAX_AGE"], plain["CONN_HEALTH_CHECKS"]) == (0, False)
    default = served["DATABASES"]["default"]
    assert (default["CONN_MAX_AGE"], default["CONN_HEALTH_CHECKS"]) == (60, True)


def test_the_production_server_keeps_connections_for_no_longer_than_a_request() -> None:
    # docs/decisions/0030-database-pressure.md: gunicorn's configuration no longer asks for 60 s.
    code = "import os, knowledgeweb.ops.gunicorn_conf; print(os.environ.get('DB_CONN_MAX_AGE'))"
    result = run_python(code, base_env(SECRET_KEY="k" * 50, ALLOWED_HOSTS="kw.example.org"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "None"
