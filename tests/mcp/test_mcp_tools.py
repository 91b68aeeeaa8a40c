"""The tools in-process, through the SDK's own client (no transport): bad arguments, limits, bugs.

``transactional_db``: the tool calls run in worker threads, with connections of their own.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import jsonschema
import pytest
from django.test import Client as DjangoClient
from mcp import Client
from mcp_types import INVALID_PARAMS, CallToolResult, Implementation, TextContent

from knowledgeweb.bindings.services import binding_create
from knowledgeweb.mcp_server import tools
from knowledgeweb.mcp_server.server import build_server, tool_definitions
from knowledgeweb.mcp_server.stdio import stdio_caller_source
from knowledgeweb.ops import ratelimit
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.services import thread_create
from knowledgeweb.threads.services.messages import MAX_PROSE_CHARS
from tests.mcp.conftest import QUERY, Setup, mcp_errors, run_async
from tests.mcp.scenario import without_receipt
from tests.synthetic import (
    LIGHTRAG_URL,
    lightrag_routes,
    serving,
    synthetic_lightrag_chunk,
    synthetic_lightrag_entity,
    synthetic_lightrag_relationship,
    synthetic_lightrag_success,
)

pytestmark = pytest.mark.mcp


def call(setup: Setup, name: str, arguments: dict[str, Any], *, agent: str | None = None) -> CallToolResult:
    server = build_server(caller_source=stdio_caller_source(raw_token=setup.alice_token, agent_name=agent))

    async def run() -> CallToolResult:
        async with Client(server, client_info=Implementation(name="in-process", version="1")) as client:
            return await client.call_tool(name, arguments)

    return run_async(run)


def api_post(setup: Setup, path: str, body: dict[str, Any]) -> Any:
    client = DjangoClient(HTTP_AUTHORIZATION=f"Bearer {setup.alice_token}")
    return client.post(path, body, content_type="application/json")


def nothing_written() -> None:
    assert Message.objects.count() == 0


def test_missing_arguments_are_refused_like_the_apis_invalid_body(setup: Setup) -> None:
    result = call(setup, "knowledge_search", {})

    assert result.is_error
    body = result.structured_content
    assert (body["status"], body["code"]) == (422, "invalid_request")
    assert body["detail"] == "Invalid request: arguments.query: Field required"
    api = api_post(setup, "/api/knowledge/search", {"tool": "knowledge_search"})
    assert api.status_code == 422
    assert api.json()["detail"] == "Invalid request: body.query: Field required"
    nothing_written()


def test_a_malformed_thread_id_is_invalid_and_writes_nothing(setup: Setup) -> None:
    result = call(setup, "knowledge_search", {"query": QUERY, "thread_id": "not-a-uuid"})

    assert result.is_error
    assert (result.structured_content["status"], result.structured_content["code"]) == (
        422,
        "invalid_request",
    )
    assert "arguments.thread_id" in result.structured_content["detail"]
    nothing_written()


def test_the_model_cannot_choose_the_tool_or_the_agent(setup: Setup) -> None:
    # Arguments naming another tool or agent are overridden by the server's own values.
    result = call(
        setup, "knowledge_search", {"query": QUERY, "tool": "entity_relations_search", "agent_name": "x"}
    )

    assert not result.is_error
    assert result.structured_content["binding"] == "nature"
    schema = {tool.name: tool.input_schema for tool in tool_definitions()}
    assert "tool" not in schema["knowledge_search"]["properties"]
    assert "agent_name" not in schema["knowledge_search"]["properties"]
    assert "agent_name" not in schema["create_thread"]["properties"]


def test_arguments_over_the_body_limit_are_refused_and_write_nothing(setup: Setup) -> None:
    thread = thread_create(owner=setup.alice, title="T")

    result = call(setup, "append_answer", {"thread_id": str(thread.id), "content": "x" * (2 * 1024 * 1024)})

    assert result.is_error
    assert result.structured_content == {
        "detail": "The request body is larger than the API's limit of 2097152 bytes.",
        "code": "body_too_large",
        "status": 413,
    }
    nothing_written()


def test_an_answer_over_the_prose_limit_is_refused_with_the_services_reason(setup: Setup) -> None:
    thread = thread_create(owner=setup.alice, title="T")

    too_long = "y" * (MAX_PROSE_CHARS + 1)
    result = call(setup, "append_answer", {"thread_id": str(thread.id), "content": too_long})

    assert result.is_error
    assert result.structured_content["status"] == 422
    assert f"the limit is {MAX_PROSE_CHARS}" in result.structured_content["detail"]
    api = api_post(setup, f"/api/threads/{thread.id}/messages", {"type": "ai", "content": too_long})
    assert api.status_code == 422
    assert api.json()["detail"] == result.structured_content["detail"]
    nothing_written()


def test_a_nul_in_an_answer_is_refused_like_the_api(setup: Setup) -> None:
    thread = thread_create(owner=setup.alice, title="T")

    result = call(setup, "append_answer", {"thread_id": str(thread.id), "content": "a\x00b"})

    assert result.is_error
    assert result.structured_content["status"] == 422
    assert "NUL" in result.structured_content["detail"]
    nothing_written()


def test_a_blank_thread_title_is_refused_and_creates_nothing(setup: Setup) -> None:
    result = call(setup, "create_thread", {"title": ""})

    assert result.is_error
    assert result.structured_content["status"] == 422
    assert "arguments.title" in result.structured_content["detail"]
    assert Thread.objects.count() == 0


def test_an_unknown_tool_is_a_protocol_error(setup: Setup) -> None:
    # The SDK raises the MCP error inside its task groups.
    with pytest.raises(BaseExceptionGroup) as raised:
        call(setup, "delete_everything", {})

    [error] = mcp_errors(raised.value)
    assert (error.code, error.message) == (INVALID_PARAMS, "Unknown tool 'delete_everything'.")
    nothing_written()


@pytest.mark.parametrize("debug", [False, True])
def test_an_unexpected_failure_is_a_bare_500_whose_details_stay_in_the_log(
    setup: Setup,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    settings: Any,
    debug: bool,
) -> None:
    # With DEBUG on, the API's fallback handler would answer a traceback: never passed on.
    settings.DEBUG = debug

    def broken(**kwargs: Any) -> Any:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(tools, "search_run", broken)

    result = call(setup, "knowledge_search", {"query": QUERY})

    assert result.is_error
    assert result.structured_content == {
        "detail": "Internal server error.",
        "code": "internal_error",
        "status": 500,
    }
    assert "secret internals" not in json.dumps(result.model_dump())
    assert "secret internals" in caplog.text
    nothing_written()


def test_the_explicit_agent_name_wins_over_the_clients(setup: Setup) -> None:
    created = call(setup, "create_thread", {"title": "Named"}, agent="lead_agent")
    announced = call(setup, "create_thread", {"title": "Announced"})

    assert created.structured_content["agent_name"] == "lead_agent"
    assert announced.structured_content["agent_name"] == "in-process"


def test_success_results_validate_against_their_output_schemas(setup: Setup) -> None:
    thread = call(setup, "create_thread", {"title": "Schemas"}).structured_content
    results = {
        "create_thread": thread,
        "knowledge_search": call(setup, "knowledge_search", {"query": QUERY}).structured_content,
        "append_answer": call(
            setup, "append_answer", {"thread_id": thread["id"], "content": "Hi."}
        ).structured_content,
        "citation_report": call(setup, "citation_report", {"thread_id": thread["id"]}).structured_content,
    }
    schemas = {tool.name: tool.output_schema for tool in tool_definitions()}
    for name, structured in results.items():
        jsonschema.validate(structured, schemas[name])


def test_entity_relations_and_provider_failures_over_mcp_are_the_apis(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    binding_create(
        name="graph", provider="lightrag", base_url=LIGHTRAG_URL, api_key_env="KNOWLEDGEWEB_KEY_LIGHTRAG",
        tools=["knowledge_search", "entity_relations_search"], users=[setup.alice],
    )  # fmt: skip
    chunk = synthetic_lightrag_chunk("doc-1-chunk-0", "Synthetic: Alice founded Acme in 1999.")
    graph = synthetic_lightrag_success(
        chunks=[chunk],
        entities=[synthetic_lightrag_entity("Acme", "A company.", "doc-1-chunk-0")],
        relationships=[
            synthetic_lightrag_relationship("Alice", "Acme", "Alice founded Acme.", "doc-1-chunk-0")
        ],
        mode="hybrid",
    )
    arguments = {"query": "who founded acme?", "binding": "graph"}
    api_body = {"tool": "entity_relations_search", "agent_name": "in-process", **arguments}

    with serving(monkeypatch, lightrag=lightrag_routes(graph)) as upstream:
        over_mcp = call(setup, "entity_relations_search", arguments)
        over_api = api_post(setup, "/api/knowledge/search", api_body)
    assert len(upstream.requests) == 2
    assert over_api.status_code == 200
    assert not over_mcp.is_error
    # Byte for byte but the receipt, which each search signs at its own time.
    assert json.dumps(without_receipt(over_mcp.structured_content)) == json.dumps(
        without_receipt(json.loads(over_api.content))
    )
    assert json.dumps(over_api.json()).encode("utf-8") == over_api.content
    first = over_mcp.content[0]
    assert isinstance(first, TextContent)
    assert first.text == over_api.json()["content"]

    broken = lightrag_routes(httpx.Response(500, json={"detail": "synthetic upstream failure"}))
    with serving(monkeypatch, lightrag=broken):
        failed_mcp = call(setup, "entity_relations_search", arguments)
        failed_api = api_post(setup, "/api/knowledge/search", api_body)
    assert failed_mcp.is_error
    assert failed_mcp.structured_content == {**failed_api.json(), "status": failed_api.status_code}
    assert failed_api.status_code == 424
    nothing_written()


def test_searches_share_the_tokens_rate_limit_with_the_api_and_are_refused_with_its_429(
    setup: Setup, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "search": (2, 3600)}
    # The two refusals are compared word for word, "try again in N s" included; on a real
    # clock they can straddle a second and differ by one.
    started = ratelimit.clock()
    monkeypatch.setattr(ratelimit, "clock", lambda: started)
    thread = call(setup, "create_thread", {"title": "limited"}).structured_content

    assert (
        api_post(setup, "/api/knowledge/search", {"tool": "knowledge_search", "query": QUERY}).status_code
        == 200
    )
    assert not call(setup, "knowledge_search", {"query": QUERY}).is_error
    refused = call(setup, "knowledge_search", {"query": QUERY, "thread_id": thread["id"]})
    over_api = api_post(setup, "/api/knowledge/search", {"tool": "knowledge_search", "query": QUERY})

    assert refused.is_error
    assert over_api.status_code == 429
    assert refused.structured_content == {**over_api.json(), "status": 429}
    assert refused.structured_content["code"] == "rate_limited"
    # The refused search wrote nothing; the other tools are not searches and are not counted.
    assert Message.objects.filter(thread_id=thread["id"]).count() == 0
    assert not call(setup, "citation_report", {"thread_id": thread["id"]}).is_error
