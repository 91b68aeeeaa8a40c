"""One log line per request with its id, status and duration; JSON lines on request; the id in a header."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from django.test import Client

from knowledgeweb.ops.logs import JsonFormatter, RequestIdFilter
from tests.integration.serving_support import base_env, run_manage, run_python

pytestmark = pytest.mark.django_db


def request_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "knowledgeweb.request"]


def test_each_request_logs_one_line_with_its_id_status_and_duration(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="knowledgeweb.request")
    response = client.get("/api/no/such/route?token=do-not-log-me")
    (line,) = request_lines(caplog)
    request_id = response["X-Request-ID"]
    assert len(request_id) == 32
    fields = vars(line)  # the request log's extra fields are set on the record at run time
    assert (fields["request_id"], fields["method"], fields["path"], fields["status"]) == (
        request_id,
        "GET",
        "/api/no/such/route",
        404,
    )
    assert fields["duration_ms"] >= 0
    assert line.getMessage().startswith("GET /api/no/such/route 404 ")
    assert "do-not-log-me" not in caplog.text


def test_a_well_formed_incoming_request_id_is_kept_and_a_bad_one_replaced(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="knowledgeweb.request")
    assert client.get("/healthz", HTTP_X_REQUEST_ID="proxy-42.a_b")["X-Request-ID"] == "proxy-42.a_b"
    replaced = client.get("/healthz", HTTP_X_REQUEST_ID="bad id\nInjected: yes")["X-Request-ID"]
    assert replaced != "bad id\nInjected: yes"
    assert len(replaced) == 32
    assert [r.request_id for r in request_lines(caplog)] == ["proxy-42.a_b", replaced]  # type: ignore[attr-defined]


def test_lines_logged_during_a_request_carry_its_id(client: Client, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    caplog.handler.addFilter(RequestIdFilter())
    client.post("/accounts/login/", {"username": "nobody", "password": "x"})
    ids = {r.request_id for r in caplog.records}  # type: ignore[attr-defined]
    assert len(ids) == 1
    assert "-" not in ids


def test_the_json_formatter_writes_one_object_per_line_with_the_request_fields() -> None:
    record = logging.LogRecord(
        "knowledgeweb.request", logging.INFO, __file__, 1, "GET / 200 1.0 ms", (), None
    )
    for key, value in {
        "request_id": "abc",
        "method": "GET",
        "path": "/",
        "status": 200,
        "duration_ms": 1.0,
    }.items():
        setattr(record, key, value)
    line = JsonFormatter().format(record)
    assert "\n" not in line
    entry = json.loads(line)
    assert {k: entry[k] for k in ("level", "logger", "message", "request_id", "status", "duration_ms")} == {
        "level": "INFO",
        "logger": "knowledgeweb.request",
        "message": "GET / 200 1.0 ms",
        "request_id": "abc",
        "status": 200,
        "duration_ms": 1.0,
    }


REQUEST = """
import os
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "knowledgeweb.settings")
import django
django.setup()
from django.test import Client
Client().get("/healthz")
"""


def test_log_format_json_gives_json_lines_on_the_console() -> None:
    result = run_python(REQUEST, base_env(DEBUG="1", LOG_FORMAT="json"))
    assert result.returncode == 0, result.stderr
    (line,) = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    assert (line["path"], line["status"], line["logger"]) == ("/healthz", 200, "knowledgeweb.request")


def test_log_format_text_is_the_default() -> None:
    result = run_python(REQUEST, base_env(DEBUG="1"))
    assert result.returncode == 0, result.stderr
    assert " INFO knowledgeweb.request [" in result.stderr
    assert "GET /healthz 200 " in result.stderr


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("LOG_LEVEL", "LOUD", "LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL, not 'LOUD'."),
        ("LOG_FORMAT", "xml", "LOG_FORMAT must be one of text, json, not 'xml'."),
    ],
)
def test_a_malformed_log_setting_stops_start_up_with_its_name(
    variable: str, value: str, message: str
) -> None:
    result = run_manage("check", env=base_env(DEBUG="1", **{variable: value}))
    assert result.returncode != 0
    assert message in result.stderr


def test_log_settings_are_read_case_insensitively(settings: Any) -> None:
    result = run_manage("check", env=base_env(DEBUG="1", LOG_LEVEL="warning", LOG_FORMAT="JSON"))
    assert result.returncode == 0, result.stderr
