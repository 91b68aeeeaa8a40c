"""A LangGraph agent on knowledgeweb's MCP tools, through langchain-mcp-adapters, imports whole.

The agent (``clients/langgraph_agent.py``) runs in the cached interop environment: a real
``create_react_agent`` with a scripted chat model, over stdio and over Streamable HTTP. It
searches without a thread, so nothing is recorded; its state, serialized each way LangChain
users serialize it, is then imported. langchain-mcp-adapters keeps the search's API body one
level down (``artifact = {"structured_content": ...}``) and the text as text blocks with ids
of its own: the import finds the result there.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from knowledgeweb.knowledge import RESERVED_KEYS
from knowledgeweb.knowledge.reserved import RECEIPT_KEY
from knowledgeweb.threads.interchange.imports import thread_import_body
from knowledgeweb.threads.models import Message, Thread
from tests.interop.conftest import run_client
from tests.interop.installation import Installation
from tests.mcp.conftest import QUERY, ROOT, Setup, SharedDatabase, http_server

pytestmark = pytest.mark.interop

QUESTION = "What do owls do at night?"
#: Each serialization of the agent's final state the import is given.
SERIALIZATIONS = ("messages_to_dict", "dumpd", "dumps", "model_dump", "platform_state", "history_values")


def _agent(interop_env: Installation, spec: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    result = run_client(
        interop_env, "langgraph_agent.py", {**spec, "question": QUESTION, "query": QUERY}, tmp_path
    )
    assert isinstance(result, dict)
    return result


@pytest.fixture
def stdio_run(
    interop_env: Installation, shared_db: SharedDatabase, setup: Setup, tmp_path: Path
) -> dict[str, Any]:
    shared_db.hand_over()
    spec = {
        "transport": "stdio",
        "command": sys.executable,
        "args": ["manage.py", "mcp_server"],
        "cwd": str(ROOT),
        "env": shared_db.environment(KNOWLEDGEWEB_TOKEN=setup.alice_token),
    }
    try:
        return _agent(interop_env, spec, tmp_path)
    finally:
        shared_db.take_back()


@pytest.fixture
def http_run(
    interop_env: Installation, shared_db: SharedDatabase, setup: Setup, tmp_path: Path
) -> dict[str, Any]:
    with http_server(shared_db, tmp_path / "mcp_http.log") as server:
        return _agent(
            interop_env,
            {"transport": "streamable_http", "url": server.url, "token": setup.alice_token},
            tmp_path,
        )


def _body(run: dict[str, Any], serialization: str) -> Any:
    body = run[serialization]
    return {"messages": body} if isinstance(body, list) and serialization != "history_values" else body


def _import(client: Client, token: str, body: Any) -> Thread:
    response = client.post(
        "/api/threads/import",
        data=json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert response.status_code == 201, response.content
    return Thread.objects.get(pk=response.json()["id"])


def _citations(client: Client, token: str, thread: Thread) -> list[dict[str, Any]]:
    response = client.get(f"/api/threads/{thread.pk}/citations", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200, response.content
    return [c for m in response.json()["messages"] for c in m["citations"]]


def _check_wrapper_read(run: dict[str, Any], thread: Thread, *, kept: bool) -> None:
    """The tool message holds the search's own text and artifact, not the adapter's wrapper;
    its evidence (and receipt) kept when ``kept``, else stripped as any caller's."""
    raw = run["model_dump"]
    wrapped = next(m for m in raw if m["type"] == "tool")
    # What the real adapter wrote: text blocks with ids of its own, the body one level down.
    assert isinstance(wrapped["content"], list)
    assert wrapped["content"][0]["type"] == "text"
    body = wrapped["artifact"]["structured_content"]
    assert RECEIPT_KEY in body["artifact"], "the search answered no receipt"
    assert set(RESERVED_KEYS) & set(body["artifact"]), "the search answered no evidence"
    tool = Message.objects.get(thread=thread, type="tool")
    assert tool.content == body["content"]
    assert tool.name == "knowledge_search"
    if kept:
        assert tool.artifact == body["artifact"]
    else:
        assert tool.artifact == {k: v for k, v in body["artifact"].items() if k not in RESERVED_KEYS}


def _check_all(run: dict[str, Any], setup: Setup) -> None:
    client = Client()
    assert "](#knowledge-" in run["answer"], run["answer"]
    for serialization in SERIALIZATIONS:
        body = _body(run, serialization)
        # Through the API by the user the server answered: the receipt checks, the source is found.
        imported = _import(client, setup.alice_token, body)
        _check_wrapper_read(run, imported, kept=True)
        assert Message.objects.filter(thread=imported).count() == 4, serialization
        citations = _citations(client, setup.alice_token, imported)
        assert [c["state"] for c in citations] == ["resolved"], (serialization, citations)
        assert citations[0]["href"] in run["answer"]
        # The same body imported by another user: the receipt is Alice's, so nothing is found.
        other = _import(client, setup.bob_token, body)
        _check_wrapper_read(run, other, kept=False)
        found = [(c["state"], c["reason_code"]) for c in _citations(client, setup.bob_token, other)]
        assert found == [("unresolved", "evidence_unsigned")], (serialization, found)
        # As the admin's import_thread --trusted: the evidence the adapter kept is found too.
        trusted = thread_import_body(owner=setup.bob, body=body, trusted=True)
        _check_wrapper_read(run, trusted, kept=True)
        assert [c["state"] for c in _citations(client, setup.bob_token, trusted)] == ["resolved"]


def test_an_agent_over_stdio_imports_with_its_evidence_found(stdio_run: dict[str, Any], setup: Setup) -> None:
    _check_all(stdio_run, setup)
    # The same run's raw MCP answer (one agent run starts the stdio server a few times: once is enough).
    _check_raw_mcp_result(stdio_run, setup)


def test_an_agent_over_http_imports_with_its_evidence_found(http_run: dict[str, Any], setup: Setup) -> None:
    _check_all(http_run, setup)


def _check_raw_mcp_result(stdio_run: dict[str, Any], setup: Setup) -> None:
    """A raw MCP ``CallToolResult`` (the 1.x SDK's, by alias) imports as the search result."""
    raw = stdio_run["mcp_call_tool_result"]
    assert "structuredContent" in raw
    assert raw["content"][0]["type"] == "text"
    body = {
        "messages": [
            {"role": "user", "content": QUESTION},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "knowledge_search", "arguments": "{}"},
                    }
                ],
            },
            # A transcript that kept the MCP answer itself, and one that kept the JSON-RPC response.
            {"role": "tool", "tool_call_id": "call_1", "content": raw},
            {"role": "tool", "tool_call_id": "call_1", "content": {"jsonrpc": "2.0", "id": 7, "result": raw}},
            {"role": "assistant", "content": stdio_run["answer"]},
        ]
    }
    thread = _import(Client(), setup.alice_token, body)
    tools = list(Message.objects.filter(thread=thread, type="tool").order_by("seq"))
    assert [t.content for t in tools] == [raw["structuredContent"]["content"]] * 2
    assert [t.name for t in tools] == ["knowledge_search"] * 2
    assert all(t.artifact == raw["structuredContent"]["artifact"] for t in tools)
    assert [c["state"] for c in _citations(Client(), setup.alice_token, thread)] == ["resolved"]
