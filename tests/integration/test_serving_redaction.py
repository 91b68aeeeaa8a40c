"""DEBUG's error page and the logs never show a password from DATABASE_URL, CACHE_URL or a provider URL."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

import pytest
from django.test import Client

from knowledgeweb.ops.logs import JsonFormatter, RedactingFormatter
from tests.integration.serving_urls import PROVIDER_URL

pytestmark = pytest.mark.django_db

DATABASE_URL = "postgres://kw:db-pass-456@db.example.test:5432/knowledgeweb"
CACHE_URL = "redis://:cache-pass-123@cache.example.test:6379/0"
SECRETS = ("db-pass-456", "cache-pass-123", "provider-pass-789")


@pytest.fixture
def debug_page(settings: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    settings.DEBUG = True
    settings.ROOT_URLCONF = "tests.integration.serving_urls"
    # A setting whose name Django's own filter does not recognise as secret.
    settings.UPSTREAM_RAGFLOW_URL = PROVIDER_URL
    monkeypatch.setenv("DATABASE_URL", DATABASE_URL)
    monkeypatch.setenv("CACHE_URL", CACHE_URL)
    # The development server copies the environment into request.META; so does this.
    client = Client(raise_request_exception=False)
    response = client.get(
        "/explode/", DATABASE_URL=DATABASE_URL, CACHE_URL=CACHE_URL, HTTP_X_UPSTREAM=PROVIDER_URL
    )
    assert response.status_code == 500
    return response.content.decode()


def test_the_debug_page_is_the_technical_page(debug_page: str) -> None:
    # The test can fail: the page really lists the frame, the request and the settings.
    assert "RuntimeError" in debug_page
    assert "base_url" in debug_page
    assert "DATABASE_URL" in debug_page
    assert "UPSTREAM_RAGFLOW_URL" in debug_page
    assert "ragflow.example.test" in debug_page


@pytest.mark.parametrize("secret", SECRETS)
def test_the_debug_page_shows_no_password(debug_page: str, secret: str) -> None:
    assert secret not in debug_page


def test_the_debug_page_hides_a_configured_password_wherever_it_appears(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The decoded password alone (as a driver's connection string shows it).
    settings.DEBUG = True
    settings.ROOT_URLCONF = "tests.integration.serving_urls"
    monkeypatch.setenv("DATABASE_URL", "postgres://kw:s%40cret-pass@db.example.test/kw")
    monkeypatch.setattr("tests.integration.serving_urls.PROVIDER_URL", "host=db user=kw password=s@cret-pass")
    page = Client(raise_request_exception=False).get("/explode/").content.decode()
    assert "password=" in page
    assert "s@cret-pass" not in page
    assert "s%40cret-pass" not in page


def _record(message: str, *args: object, exc: bool = False) -> logging.LogRecord:
    exc_info = None
    if exc:
        try:
            raise ConnectionError(f"cannot reach {CACHE_URL}")
        except ConnectionError:
            exc_info = sys.exc_info()
    return logging.LogRecord("knowledgeweb.test", logging.ERROR, __file__, 1, message, args, exc_info)


@pytest.mark.parametrize(
    "formatter", [RedactingFormatter("%(message)s"), JsonFormatter()], ids=["text", "json"]
)
def test_log_lines_show_no_password(formatter: logging.Formatter, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", DATABASE_URL)
    line = formatter.format(
        _record("connecting to %s via %s with db-pass-456", DATABASE_URL, PROVIDER_URL, exc=True)
    )
    for secret in SECRETS:
        assert secret not in line
    assert "db.example.test" in line
    assert "ConnectionError" in line
    if isinstance(formatter, JsonFormatter):
        assert json.loads(line)["level"] == "ERROR"
