"""/healthz answers without I/O; /readyz asks the database and the cache, and names what failed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from tests.integration.serving_support import HungListener, base_env, free_port, run_python

pytestmark = pytest.mark.django_db

PROBE = """
import json, os
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "knowledgeweb.settings")
import django
django.setup()
from django.test import Client
response = Client().get("/readyz")
print(json.dumps({"status": response.status_code, "body": response.json()}))
"""


def probe(env: dict[str, str]) -> dict[str, Any]:
    result = run_python(PROBE, env)
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def test_healthz_answers_without_touching_the_database(
    client: Client, django_assert_num_queries: Any
) -> None:
    with django_assert_num_queries(0):
        response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_the_probes_answer_any_host_and_are_never_redirected_to_https(client: Client, settings: Any) -> None:
    settings.SECURE_SSL_REDIRECT = True
    settings.ALLOWED_HOSTS = ["kw.example"]
    # A load balancer probes by address over plain HTTP.
    assert client.get("/healthz", HTTP_HOST="10.0.0.7:8000").status_code == 200
    assert client.get("/readyz", HTTP_HOST="10.0.0.7:8000").status_code == 200
    assert client.get("/accounts/login/", HTTP_HOST="kw.example").status_code == 301


def test_readyz_is_ok_when_the_database_and_the_cache_answer(client: Client) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "failed": [], "checks": {"database": "ok", "cache": "ok"}}
    assert response["Cache-Control"] == "no-store"


def test_readyz_names_a_hung_cache_and_answers_503(tmp_path: Path) -> None:
    with HungListener() as hung:
        body = probe(
            base_env(
                DEBUG="1",
                DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
                CACHE_URL=f"redis://:cache-pass-123@127.0.0.1:{hung.port}/0",
                READINESS_TIMEOUT="2",
            )
        )
    assert body["status"] == 503
    assert body["body"]["failed"] == ["cache"]
    assert body["body"]["checks"]["database"] == "ok"
    assert body["body"]["checks"]["cache"] == "failed"
    assert "cache-pass-123" not in json.dumps(body)


def test_readyz_names_an_unreachable_cache_and_answers_503(tmp_path: Path) -> None:
    # A database of its own: a fresh clone has no var/ for the default SQLite file.
    body = probe(
        base_env(
            DEBUG="1",
            DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
            CACHE_URL=f"redis://127.0.0.1:{free_port()}/0",
        )
    )
    assert body["status"] == 503
    assert body["body"]["failed"] == ["cache"]


def test_readyz_names_a_database_that_cannot_be_opened_and_answers_503(tmp_path: Any) -> None:
    missing = tmp_path / "no-such-folder" / "db.sqlite3"
    body = probe(base_env(DEBUG="1", DATABASE_URL=f"sqlite:///{missing}"))
    assert body["status"] == 503
    assert body["body"]["failed"] == ["database"]
    # Which check failed, never the exception's class or message.
    assert body["body"]["checks"] == {"database": "failed", "cache": "ok"}
    assert "OperationalError" not in json.dumps(body)


def test_readyz_names_a_postgresql_server_that_is_not_there() -> None:
    url = f"postgres://kw:db-pass-456@127.0.0.1:{free_port()}/kw"
    body = probe(base_env(DEBUG="1", DATABASE_URL=url))
    assert body["status"] == 503
    assert body["body"]["failed"] == ["database"]
    assert "db-pass-456" not in json.dumps(body)


def test_readyz_gives_up_on_a_database_that_never_answers() -> None:
    # PostgreSQL that accepts the connection and then says nothing: the probe's own
    # timeout answers, not the driver's connect_timeout.
    with HungListener() as hung:
        body = probe(
            base_env(DEBUG="1", DATABASE_URL=f"postgres://kw@127.0.0.1:{hung.port}/kw", READINESS_TIMEOUT="1")
        )
    assert body["status"] == 503
    assert body["body"]["failed"] == ["database"]
    assert body["body"]["checks"]["database"] == "no answer within 1 s"
