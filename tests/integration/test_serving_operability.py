"""Operability: the HTML 500 page names its request; `make serve` and gunicorn refuse to start
without ALLOWED_HOSTS (or SECRET_KEY), in words, before installing or migrating anything."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from knowledgeweb.ops.database import failure_log
from tests.integration.serving_support import PRODUCTION_KEY, PYTHON, ROOT, base_env

ALLOWED_HOSTS_MISSING = "ALLOWED_HOSTS is not set. Set it to the host names this server answers to"


@pytest.mark.django_db
def test_the_html_500_page_shows_the_request_id(settings: Any) -> None:
    settings.DEBUG = False
    settings.ROOT_URLCONF = "tests.integration.serving_urls"
    response = Client(raise_request_exception=False).get("/explode/", HTTP_X_REQUEST_ID="req-500-abc")
    assert response.status_code == 500
    assert response["X-Request-ID"] == "req-500-abc"
    page = response.content.decode()
    assert "<h1>Server error</h1>" in page
    assert "<code data-request-id>req-500-abc</code>" in page
    # Nothing of the failure itself.
    assert "RuntimeError" not in page
    assert "ragflow.example.test" not in page


@pytest.mark.django_db
def test_the_500_page_gets_a_fresh_id_when_none_was_sent(settings: Any) -> None:
    settings.DEBUG = False
    settings.ROOT_URLCONF = "tests.integration.serving_urls"
    response = Client(raise_request_exception=False).get("/explode/")
    request_id = response["X-Request-ID"]
    assert len(request_id) == 32
    assert f"<code data-request-id>{request_id}</code>" in response.content.decode()


def _make_serve(env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    # A virtualenv path of its own and a Python that cannot run: if the preflight let the
    # target through, installing would fail at once instead of touching the real venv.
    return subprocess.run(  # noqa: S603 - make and our own Makefile
        ["make", "-s", "serve", f"VENV={tmp_path / 'venv'}", "PYTHON=false"],  # noqa: S607
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_make_serve_refuses_to_start_without_allowed_hosts(tmp_path: Path) -> None:
    done = _make_serve(base_env(SECRET_KEY=PRODUCTION_KEY), tmp_path)
    assert done.returncode != 0
    assert ALLOWED_HOSTS_MISSING in done.stderr
    assert "Nothing was started." in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert not (tmp_path / "venv").exists()  # nothing installed, nothing migrated


def test_make_serve_refuses_to_start_without_a_secret_key(tmp_path: Path) -> None:
    done = _make_serve(base_env(ALLOWED_HOSTS="kw.example.org"), tmp_path)
    assert done.returncode != 0
    assert "SECRET_KEY is not set" in done.stderr
    assert not (tmp_path / "venv").exists()


def test_the_preflight_passes_a_configured_environment(tmp_path: Path) -> None:
    # The preflight lets it through to installing, which this test's Python cannot do.
    done = _make_serve(base_env(ALLOWED_HOSTS="kw.example.org", SECRET_KEY=PRODUCTION_KEY), tmp_path)
    assert done.returncode != 0
    assert "is not set" not in done.stderr


def test_gunicorn_started_directly_refuses_too() -> None:
    done = subprocess.run(  # noqa: S603 - our own interpreter and gunicorn
        [PYTHON, "-m", "gunicorn", "-c", "python:knowledgeweb.ops.gunicorn_conf"],
        cwd=ROOT,
        env=base_env(SECRET_KEY=PRODUCTION_KEY),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert f"gunicorn: {ALLOWED_HOSTS_MISSING}" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.django_db
def test_a_page_whose_database_refuses_answers_503_and_logs_one_line(
    settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings.DEBUG = False
    settings.ROOT_URLCONF = "tests.integration.serving_urls"
    settings.DB_FAILURE_LOG_INTERVAL = 600
    failure_log._kinds.clear()
    client = Client(raise_request_exception=False)
    with caplog.at_level("INFO"):
        responses = [client.get("/database-down/") for _ in range(5)]
    assert [r.status_code for r in responses] == [503] * 5
    assert {r["Retry-After"] for r in responses} == {"5"}
    assert "The database is unavailable (connection refused)" in responses[0].content.decode()
    lines = [r for r in caplog.records if r.levelname == "ERROR"]
    assert [r.getMessage().split(":")[0] for r in lines] == ["Database unavailable (connection refused)"]
    assert all(r.exc_info is None for r in lines)
