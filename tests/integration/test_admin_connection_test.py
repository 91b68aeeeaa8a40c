"""Test connection, against loopback stand-ins: success, wrong key, unreachable, redirect refused.

The request goes through the same client as every use; the key comes from the
environment and never shows in the page or in any log record.
"""

from __future__ import annotations

import html
import logging
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.bindings.connection_test import binding_connection_test
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.composer.models import AnswerModel
from knowledgeweb.providers.client import transport_override
from tests.local_servers import RagflowServer, synthetic_dataset
from tests.standins.chat_server import Reply, serve
from tests.synthetic import LIGHTRAG_URL, Upstream, lightrag_routes, synthetic_lightrag_no_results

pytestmark = pytest.mark.django_db

ADD = "/admin/bindings/knowledgebinding/add/"
CHANGELIST = "/admin/bindings/knowledgebinding/"
MODEL_ADD = "/admin/composer/answermodel/add/"
KEY_ENV = "KNOWLEDGEWEB_KEY_CONNECTION_TEST"
SECRET = "sk-connection-test-Secret-7f3a9"
RIGHT_KEY = "the-key-the-server-expects"


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)
    return caplog


@pytest.fixture
def ragflow() -> Iterator[RagflowServer]:
    server = RagflowServer(datasets=[synthetic_dataset("dsA")], api_key=RIGHT_KEY)
    yield server
    server.close()


def closed_port_url() -> str:
    """A loopback address nothing listens on: connecting is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def binding_form(user: User, base_url: str, **changes: Any) -> dict[str, Any]:
    return {
        "name": "ragflow-main",
        "provider": "ragflow",
        "enabled": "on",
        "base_url": base_url,
        "api_key_env": KEY_ENV,
        "users": [str(user.pk)],
        "tools": ["knowledge_search"],
        "top_k": "20",
        "timeout": "10",
        "scope": "all",
        "_test_connection": "1",
        **changes,
    }


def result_of(response: Any) -> tuple[str, str]:
    page = html.unescape(response.content.decode())
    start = page.index("data-connection-result=")
    code = page[start:].split('"')[1]
    text = page[page.index(">", start) + 1 : page.index("</p>", start)]
    return code, text


def assert_no_secret(response: Any, logs: pytest.LogCaptureFixture) -> None:
    assert SECRET not in response.content.decode()
    assert SECRET not in logs.text
    assert all(SECRET not in str(record.args) for record in logs.records)


# --- bindings -------------------------------------------------------------------------------


def test_a_binding_that_answers_passes_and_nothing_is_saved(
    admin_client: Client, user: User, ragflow: RagflowServer, monkeypatch: pytest.MonkeyPatch, logs: Any
) -> None:
    monkeypatch.setenv(KEY_ENV, RIGHT_KEY)

    response = admin_client.post(ADD, binding_form(user, ragflow.url))

    assert response.status_code == 200
    assert result_of(response) == (
        "ok",
        "✓ Connection test passed. RAGFlow answered and accepted the key, which sees at least one dataset.",
    )
    assert ragflow.paths == ["/api/v1/datasets"]  # one small request
    assert KnowledgeBinding.objects.count() == 0
    assert "Please correct the error" not in response.content.decode()


def test_a_wrong_key_says_its_code_and_message_and_never_shows_the_key(
    admin_client: Client, user: User, ragflow: RagflowServer, monkeypatch: pytest.MonkeyPatch, logs: Any
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)

    response = admin_client.post(ADD, binding_form(user, ragflow.url))

    assert result_of(response) == (
        "provider_auth",
        "✗ Connection test failed [provider_auth]. RAGFlow rejected the API key (authentication failed): "
        "Authentication error: API key is invalid!",
    )
    assert_no_secret(response, logs)
    assert "provider_auth" in logs.text  # the outcome is logged, without the key


def test_an_unreachable_provider_is_said_plainly(
    admin_client: Client, user: User, monkeypatch: pytest.MonkeyPatch, logs: Any
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)

    response = admin_client.post(ADD, binding_form(user, closed_port_url()))

    code, message = result_of(response)
    assert code == "provider_unreachable"
    assert message.startswith(
        "✗ Connection test failed [provider_unreachable]. RAGFlow could not be reached ("
    )
    assert_no_secret(response, logs)


def test_a_redirect_is_refused_and_its_target_never_contacted(
    admin_client: Client, user: User, monkeypatch: pytest.MonkeyPatch, logs: Any
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    target = RagflowServer(datasets=[synthetic_dataset()])
    redirecting = RagflowServer(datasets=[], redirect_to=target.url + "/api/v1/datasets")
    try:
        response = admin_client.post(ADD, binding_form(user, redirecting.url))
    finally:
        redirecting.close()
        target.close()

    assert result_of(response) == (
        "provider_redirect_refused",
        "✗ Connection test failed [provider_redirect_refused]. RAGFlow answered HTTP 302 (a redirect). "
        "Redirects are never followed, so the new location was not contacted.",
    )
    assert target.paths == []
    assert_no_secret(response, logs)


def test_a_missing_key_variable_sends_nothing(
    admin_client: Client, user: User, ragflow: RagflowServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)

    response = admin_client.post(ADD, binding_form(user, ragflow.url))

    code, message = result_of(response)
    assert code == "provider_misconfigured"
    assert f"{KEY_ENV} that holds this binding's API key is not set; no request was sent." in message
    assert ragflow.paths == []


def test_a_form_with_errors_is_not_tested(admin_client: Client, user: User, ragflow: RagflowServer) -> None:
    response = admin_client.post(ADD, binding_form(user, ragflow.url, top_k="500"))

    assert result_of(response)[0] == "not_tested"
    assert ragflow.paths == []


def test_the_changelist_action_tests_saved_bindings(
    admin_client: Client, user: User, ragflow: RagflowServer, monkeypatch: pytest.MonkeyPatch, logs: Any
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    binding = binding_create(
        name="ragflow-main",
        provider="ragflow",
        base_url=ragflow.url,
        api_key_env=KEY_ENV,
        tools=["knowledge_search"],
        users=[user],
    )
    local = binding_create(name="manuals", provider="local", tools=["knowledge_search"], users=[user])

    response = admin_client.post(
        CHANGELIST,
        {"action": "test_connection", "_selected_action": [str(binding.pk), str(local.pk)]},
        follow=True,
    )

    page = html.unescape(response.content.decode())
    assert "Binding 'ragflow-main': connection test failed [provider_auth]." in page
    assert "Binding 'manuals': connection test passed. Local index (embedded) is built in" in page
    assert_no_secret(response, logs)


def test_the_service_refuses_to_send_for_a_binding_that_breaks_its_rules(db: None) -> None:
    binding = KnowledgeBinding(
        name="bad", provider="ragflow", base_url="ftp://x", api_key_env=KEY_ENV, tools=["knowledge_search"]
    )
    result = binding_connection_test(binding=binding)
    assert (result.code, result.ok) == ("provider_misconfigured", False)
    assert "No request was sent." in result.message


# --- answer models --------------------------------------------------------------------------


def model_form(user: User, base_url: str, **changes: Any) -> dict[str, Any]:
    return {
        "name": "vllm",
        "enabled": "on",
        "base_url": base_url,
        "model": "standin-model",
        "api_key_env": KEY_ENV,
        "temperature": "0.2",
        "max_output_tokens": "1024",
        "context_budget": "24000",
        "timeout": "10",
        "users": [str(user.pk)],
        "_test_connection": "1",
        **changes,
    }


def test_an_answer_model_that_answers_passes(
    admin_client: Client, user: User, monkeypatch: pytest.MonkeyPatch, logs: Any
) -> None:
    monkeypatch.setenv(KEY_ENV, RIGHT_KEY)
    with serve(lambda body: Reply(text="OK"), api_key=RIGHT_KEY) as server:
        response = admin_client.post(MODEL_ADD, model_form(user, server.base_url))
        asked = server.requests

    assert result_of(response) == (
        "ok",
        "✓ Connection test passed. Answer model 'vllm' answered with a whole answer (standin-model).",
    )
    assert len(asked) == 1
    assert asked[0]["max_tokens"] == 8
    assert AnswerModel.objects.count() == 0


def test_an_answer_model_cut_at_the_tests_token_limit_still_passes(
    admin_client: Client, user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, RIGHT_KEY)
    with serve(
        lambda body: Reply(text="Sure, here it is", finish_reason="length"), api_key=RIGHT_KEY
    ) as server:
        response = admin_client.post(MODEL_ADD, model_form(user, server.base_url))

    code, message = result_of(response)
    assert code == "ok"
    assert "stopped at the test's 8-token limit" in message


def test_an_answer_models_wrong_key_says_its_code_and_never_shows_the_key(
    admin_client: Client, user: User, monkeypatch: pytest.MonkeyPatch, logs: Any
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    with serve(lambda body: Reply(text="OK"), api_key=RIGHT_KEY) as server:
        response = admin_client.post(MODEL_ADD, model_form(user, server.base_url))
        sent = list(server.authorizations)

    assert sent == [f"Bearer {SECRET}"]  # the key from the environment was sent, in the header only
    assert result_of(response) == (
        "model_auth",
        "✗ Connection test failed [model_auth]. Answer model 'vllm' refused the credential (HTTP 401): "
        "Incorrect API key provided. Check the key variable.",
    )
    assert_no_secret(response, logs)


def test_an_unreachable_answer_model_is_said_plainly(
    admin_client: Client, user: User, monkeypatch: pytest.MonkeyPatch, logs: Any
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)

    response = admin_client.post(MODEL_ADD, model_form(user, closed_port_url() + "/v1"))

    assert result_of(response) == (
        "model_unreachable",
        "✗ Connection test failed [model_unreachable]. Answer model 'vllm' could not be reached or dropped "
        "the connection (ConnectError).",
    )
    assert_no_secret(response, logs)


def test_an_answer_models_redirect_is_refused(
    admin_client: Client, user: User, monkeypatch: pytest.MonkeyPatch, logs: Any
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    with serve(lambda body: Reply(status=307, location="http://127.0.0.1:9/v1/chat/completions")) as server:
        response = admin_client.post(MODEL_ADD, model_form(user, server.base_url))

    assert result_of(response) == (
        "model_redirect_refused",
        "✗ Connection test failed [model_redirect_refused]. Answer model 'vllm' answered HTTP 307 (a redirect). "
        "Redirects are never followed, so the new location was not contacted.",
    )
    assert_no_secret(response, logs)


# --- LightRAG's probe (synthetic payloads through the client's one test seam) ---------------


def lightrag_binding() -> KnowledgeBinding:
    return KnowledgeBinding(
        name="graph",
        provider="lightrag",
        base_url=LIGHTRAG_URL,
        api_key_env=KEY_ENV,
        tools=["knowledge_search"],
        timeout=10,
    )


def test_lightrags_probe_is_one_keyed_naive_search_of_one_hit(
    monkeypatch: pytest.MonkeyPatch, db: None
) -> None:
    monkeypatch.setenv(KEY_ENV, RIGHT_KEY)
    upstream = Upstream(lightrag_routes(synthetic_lightrag_no_results(mode="naive")))
    with transport_override(upstream.transport):
        result = binding_connection_test(binding=lightrag_binding())

    assert result.ok
    assert "LightRAG answered and accepted the key" in result.message
    (request,) = upstream.requests
    assert request.headers["X-API-Key"] == RIGHT_KEY
    body = upstream.bodies("/query/data")[0]
    assert (body["mode"], body["top_k"], body["chunk_top_k"]) == ("naive", 1, 1)


def test_lightrags_probe_reports_a_refused_key_without_it(
    monkeypatch: pytest.MonkeyPatch, db: None, logs: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    refused = httpx.Response(403, json={"detail": "Invalid API Key"})
    with transport_override(Upstream(lightrag_routes(refused)).transport):
        result = binding_connection_test(binding=lightrag_binding())

    assert (result.code, result.message) == (
        "provider_auth",
        "LightRAG rejected the API key (HTTP 403): Invalid API Key",
    )
    assert SECRET not in logs.text


def test_the_answer_model_list_action_tests_saved_models(
    admin_client: Client, user: User, monkeypatch: pytest.MonkeyPatch, logs: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    with serve(lambda body: Reply(text="OK"), api_key=RIGHT_KEY) as server:
        model = AnswerModel(name="vllm", base_url=server.base_url, model="standin-model", api_key_env=KEY_ENV)
        model.full_clean()
        model.save()
        response = admin_client.post(
            "/admin/composer/answermodel/",
            {"action": "test_connection", "_selected_action": [str(model.pk)]},
            follow=True,
        )

    page = html.unescape(response.content.decode())
    assert "Answer model 'vllm': connection test failed [model_auth]." in page
    assert_no_secret(response, logs)
