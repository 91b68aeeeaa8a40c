"""Every error under /api/ is JSON with ``detail`` and ``code``, with DEBUG on or off."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.http import HttpRequest, HttpResponse
from django.test import Client

from knowledgeweb.threads.models import Thread

pytestmark = pytest.mark.django_db


@pytest.fixture(params=[False, True], ids=["debug-off", "debug-on"])
def debug(request: pytest.FixtureRequest, settings: Any) -> bool:
    settings.DEBUG = request.param
    return bool(request.param)


def assert_json_error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].split(";")[0] == "application/json"
    body = response.json()
    assert set(body) >= {"detail", "code"}
    assert body["code"] == code
    assert "<html" not in response.content.decode().lower()
    assert "Traceback" not in response.content.decode()
    return dict(body)


def test_an_unknown_api_route_answers_json_404(debug: bool, api_client: Client) -> None:
    body = assert_json_error(api_client.get("/api/no/such/route"), 404, "not_found")
    assert body["detail"] == "No API route matches GET /api/no/such/route."


def test_an_unknown_route_outside_the_api_is_still_a_page(debug: bool, client: Client) -> None:
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_a_wrong_method_answers_json_405_with_allow(debug: bool, api_client: Client) -> None:
    response = api_client.delete("/api/knowledge/search")
    body = assert_json_error(response, 405, "method_not_allowed")
    assert response["Allow"] == "POST"
    assert body["detail"] == "DELETE is not allowed on /api/knowledge/search; allowed: POST."


def test_a_body_over_the_limit_answers_json_413_and_writes_nothing(debug: bool, api_client: Client) -> None:
    big = b'{"title": "' + b"x" * (2 * 1024 * 1024 + 10) + b'"}'
    response = api_client.post("/api/threads", big, content_type="application/json")
    assert_json_error(response, 413, "body_too_large")
    assert Thread.objects.count() == 0


def test_an_error_inside_an_operation_answers_json_500(
    debug: bool, api_client: Client, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def fail(**_: Any) -> None:
        raise RuntimeError("selector broke")

    monkeypatch.setattr("knowledgeweb.api.knowledge.retrieval_capabilities", fail)
    client = Client(
        raise_request_exception=False, HTTP_AUTHORIZATION=api_client.defaults["HTTP_AUTHORIZATION"]
    )
    response = client.get("/api/knowledge/capabilities")
    body = assert_json_error(response, 500, "server_error")
    assert (
        body["detail"]
        == f"Internal server error (request id {response['X-Request-ID']}); it has been logged."
    )
    assert "selector broke" not in response.content.decode()
    # The traceback goes to the log instead.
    assert any("selector broke" in (r.exc_text or str(r.exc_info)) for r in caplog.records if r.exc_info)


def test_an_error_outside_the_api_handlers_still_answers_json_500(
    debug: bool, api_client: Client, settings: Any
) -> None:
    # A middleware that fails: Django answers with its 500 page (DEBUG's traceback page
    # when DEBUG is on), which the API error middleware replaces.
    settings.MIDDLEWARE = [
        *settings.MIDDLEWARE,
        "tests.integration.test_serving_api_errors.FailingMiddleware",
    ]
    client = Client(
        raise_request_exception=False, HTTP_AUTHORIZATION=api_client.defaults["HTTP_AUTHORIZATION"]
    )
    assert_json_error(client.get("/api/knowledge/capabilities"), 500, "server_error")


class FailingMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        raise RuntimeError("middleware broke")


def test_api_docs_stay_a_page(client: Client) -> None:
    response = client.get("/api/docs")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
