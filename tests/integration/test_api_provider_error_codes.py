"""Every kind of provider failure has its own code, through the API, and the key is never shown.

With no thread the search answers 424 ``{"detail", "code"}``; with a thread it answers
200 with ``status: "error"``, ``error_code``, and an error tool message whose artifact is
``{"error": {"code": ...}}``. Timeouts and unreachable hosts use real sockets on
loopback; the other answers are SYNTHETIC LightRAG payloads (docs/providers.md) that echo the key.
"""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.providers.client import MAX_BODY_BYTES
from knowledgeweb.providers.errors import ProviderErrorCode
from knowledgeweb.threads.models import Message, Thread
from tests.local_servers import TrickleServer
from tests.synthetic import LIGHTRAG_KEY, LIGHTRAG_URL, serving

pytestmark = pytest.mark.django_db
SEARCH = "/api/knowledge/search"
ECHO = f"Invalid API Key {LIGHTRAG_KEY}; X-API-Key: {LIGHTRAG_KEY}"

Answer = Callable[[httpx.Request], httpx.Response]

SYNTHETIC: list[tuple[str, Answer, str]] = [
    ("provider_auth", lambda r: httpx.Response(403, json={"detail": ECHO}), "LightRAG rejected the API key (HTTP 403)"),
    ("provider_rate_limited", lambda r: httpx.Response(429, headers={"Retry-After": "30"}, json={"detail": ECHO}), "LightRAG answered HTTP 429: too many requests. It asks to retry after 30 seconds."),
    ("provider_server_error", lambda r: httpx.Response(500, json={"detail": ECHO}), "LightRAG answered HTTP 500: Invalid API Key [redacted]"),
    ("provider_bad_response", lambda r: httpx.Response(200, content=b'{"status": "success", ' + LIGHTRAG_KEY.encode()), "LightRAG answered with malformed JSON (HTTP 200)."),
    ("provider_bad_response", lambda r: httpx.Response(404, json={"detail": ECHO}), "LightRAG answered HTTP 404: Invalid API Key [redacted]"),
    ("provider_rejected", lambda r: httpx.Response(400, json={"status": "failure", "message": f"Validation error: {ECHO}", "data": {}, "metadata": {}}), "LightRAG rejected the query as invalid: Validation error: Invalid API Key [redacted]"),
    ("provider_redirect_refused", lambda r: httpx.Response(302, headers={"Location": f"https://attacker.example.test/?k={LIGHTRAG_KEY}"}), "LightRAG answered HTTP 302 (a redirect). Redirects are never followed"),
    ("provider_too_large", lambda r: httpx.Response(200, headers={"Content-Length": str(MAX_BODY_BYTES + 1)}, content=b"{}"), "LightRAG's response is larger than the 4 MiB limit; it was not read."),
]  # fmt: skip


@pytest.fixture
def logged(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)
    return caplog


def bind(user: User, base_url: str = LIGHTRAG_URL, timeout: int = 30) -> KnowledgeBinding:
    return binding_create(
        name="lightrag-main", provider="lightrag", base_url=base_url, api_key_env="KNOWLEDGEWEB_KEY_LIGHTRAG",
        tools=["knowledge_search"], users=[user], timeout=timeout,
    )  # fmt: skip


def search(client: Client, thread: Thread | None) -> Any:
    body: dict[str, Any] = {
        "tool": "knowledge_search",
        "query": "who founded acme?",
        "binding": "lightrag-main",
    }
    if thread is not None:
        body["thread_id"] = str(thread.id)
    return client.post(SEARCH, body, content_type="application/json")


def assert_kind(
    response: Any, code: str, detail: str, thread: Thread | None, caplog: pytest.LogCaptureFixture
) -> None:
    body = response.json()
    if thread is None:
        assert response.status_code == 424, response.content
        assert body["code"] == code
        assert detail in body["detail"]
        assert Message.objects.count() == 0
    else:
        assert response.status_code == 200, response.content
        message = Message.objects.get()
        assert (body["status"], body["error_code"], body["artifact"]) == (
            "error",
            code,
            {"error": {"code": code}},
        )
        assert (message.status, message.artifact) == ("error", {"error": {"code": code}})
        assert detail in message.content
    assert f"failed ({code})" in caplog.text
    stored = "".join(m.content + json.dumps(m.artifact) for m in Message.objects.all())
    for text in (response.content.decode(), caplog.text, stored):
        assert LIGHTRAG_KEY not in text


@pytest.mark.parametrize("with_thread", [False, True], ids=["no-thread", "thread"])
@pytest.mark.parametrize(
    ("code", "answer", "detail"), SYNTHETIC, ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(SYNTHETIC)]
)
def test_each_kind_of_answer_has_its_code(
    code: str, answer: Answer, detail: str, with_thread: bool,
    user: User, thread: Thread, api_client: Client, monkeypatch: pytest.MonkeyPatch, logged: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    with serving(monkeypatch, lightrag=answer) as upstream:
        bind(user)
        response = search(api_client, thread if with_thread else None)
    assert [r.url.host for r in upstream.requests] == ["lightrag.example.test"]
    assert_kind(response, code, detail, thread if with_thread else None, logged)


@pytest.mark.parametrize("with_thread", [False, True], ids=["no-thread", "thread"])
def test_a_provider_that_never_answers_is_provider_timeout(
    with_thread: bool, user: User, thread: Thread, api_client: Client,
    monkeypatch: pytest.MonkeyPatch, logged: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    monkeypatch.setenv("KNOWLEDGEWEB_KEY_LIGHTRAG", LIGHTRAG_KEY)
    server = TrickleServer(silent=True)
    try:
        bind(user, base_url=server.url, timeout=1)
        response = search(api_client, thread if with_thread else None)
    finally:
        server.close()
    detail = (
        "LightRAG sent no complete answer within 1 s, the binding's timeout for the whole search; "
        "it ran out while waiting for the response headers of the mix query."
    )
    assert_kind(response, "provider_timeout", detail, thread if with_thread else None, logged)
    assert server.hung_up.wait(5)


@pytest.mark.parametrize("with_thread", [False, True], ids=["no-thread", "thread"])
def test_a_closed_port_is_provider_unreachable(
    with_thread: bool, user: User, thread: Thread, api_client: Client,
    monkeypatch: pytest.MonkeyPatch, logged: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    monkeypatch.setenv("KNOWLEDGEWEB_KEY_LIGHTRAG", LIGHTRAG_KEY)
    probe = socket.create_server(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    bind(user, base_url=f"http://127.0.0.1:{port}")
    response = search(api_client, thread if with_thread else None)
    assert_kind(
        response,
        "provider_unreachable",
        "LightRAG could not be reached (ConnectError",
        thread if with_thread else None,
        logged,
    )


def test_an_adapter_bug_is_provider_adapter_error(
    user: User,
    thread: Thread,
    api_client: Client,
    monkeypatch: pytest.MonkeyPatch,
    logged: pytest.LogCaptureFixture,
) -> None:
    from knowledgeweb.providers.lightrag import adapter

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError(f"bug while holding {LIGHTRAG_KEY}")

    monkeypatch.setattr(adapter, "lightrag_data", broken)
    with serving(monkeypatch):
        bind(user)
        response = search(api_client, thread)
    assert_kind(
        response, "provider_adapter_error", "unexpected RuntimeError in the lightrag adapter.", thread, logged
    )


def test_a_connection_the_adapter_cannot_use_is_provider_misconfigured(
    user: User, api_client: Client, monkeypatch: pytest.MonkeyPatch, logged: pytest.LogCaptureFixture
) -> None:
    # The binding rules refuse such configurations first; the adapter still refuses on its own.
    from knowledgeweb.retrieval import service

    monkeypatch.setattr(service, "mode_resolve", lambda **kwargs: "bypass")
    with serving(monkeypatch) as upstream:
        bind(user)
        response = search(api_client, None)
    assert_kind(response, "provider_misconfigured", "cannot run in mode 'bypass'", None, logged)
    assert upstream.requests == []


def test_openapi_lists_every_provider_code(api_client: Client) -> None:
    schemas = api_client.get("/api/openapi.json").json()["components"]["schemas"]
    codes = {code.value for code in ProviderErrorCode}
    assert set(schemas["ProviderErrorCode"]["enum"]) == codes
    assert schemas["ProviderErrorOut"]["properties"]["code"] == {
        "$ref": "#/components/schemas/ProviderErrorCode",
        "description": schemas["ProviderErrorOut"]["properties"]["code"]["description"],
    }
    operation = api_client.get("/api/openapi.json").json()["paths"]["/api/knowledge/search"]["post"]
    assert operation["responses"]["424"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ProviderErrorOut"
    }
    assert len(codes) == 11
