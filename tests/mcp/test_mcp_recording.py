"""A thread recorded over MCP is whole (issue 28, item 4): ``record_question`` writes the question,
``append_answer`` with ``tool_calls`` the calls, so the thread reads like one imported from the
agent's state; and a search's receipt travels in ``structuredContent``, so an import of what the
client kept resolves (issue 28, item 1). In-process, through the SDK's own client."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from mcp import Client
from mcp_types import CallToolResult, Implementation

from knowledgeweb.knowledge import shared_handle
from knowledgeweb.knowledge.reserved import RECEIPT_KEY
from knowledgeweb.mcp_server.server import build_server, tool_definitions
from knowledgeweb.mcp_server.stdio import stdio_caller_source
from knowledgeweb.threads.evidence import REASON_UNSIGNED
from knowledgeweb.threads.interchange.imports import thread_import_body
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.selectors import thread_citations
from knowledgeweb.threads.services import thread_create
from tests.mcp.conftest import QUERY, Setup, run_async

pytestmark = pytest.mark.mcp


def call(setup: Setup, name: str, arguments: dict[str, Any], *, token: str | None = None) -> CallToolResult:
    server = build_server(
        caller_source=stdio_caller_source(raw_token=token or setup.alice_token, agent_name=None)
    )

    async def run() -> CallToolResult:
        async with Client(server, client_info=Implementation(name="in-process", version="1")) as client:
            return await client.call_tool(name, arguments)

    return run_async(run)


def test_a_thread_recorded_over_mcp_holds_the_question_the_calls_the_result_and_the_answer(
    setup: Setup,
) -> None:
    thread = call(setup, "create_thread", {"title": "Owls"}).structured_content
    question = call(setup, "record_question", {"thread_id": thread["id"], "content": "What do owls hunt?"})
    calls = call(
        setup,
        "append_answer",
        {
            "thread_id": thread["id"],
            "content": "",
            "tool_calls": [{"id": "call_owls", "name": "knowledge_search", "args": {"query": QUERY}}],
        },
    )
    found = call(setup, "knowledge_search", {"query": QUERY, "thread_id": thread["id"]}).structured_content
    handle = shared_handle(found["artifact"]["knowledge_sources"][0]["id"])
    answer = call(setup, "append_answer", {"thread_id": thread["id"], "content": f"Mice [notes](#{handle})."})

    assert [r.is_error for r in (question, calls, answer)] == [False, False, False]
    schemas = {tool.name: tool.output_schema for tool in tool_definitions()}
    jsonschema.validate(question.structured_content, schemas["record_question"])
    jsonschema.validate(calls.structured_content, schemas["append_answer"])
    messages = list(Message.objects.filter(thread_id=thread["id"]).order_by("seq"))
    assert [(m.type, m.content) for m in messages[:2]] == [("human", "What do owls hunt?"), ("ai", "")]
    assert messages[1].tool_calls == [
        {"id": "call_owls", "name": "knowledge_search", "args": {"query": QUERY}}
    ]
    assert [m.type for m in messages] == ["human", "ai", "tool", "ai"]
    recorded = Thread.objects.get(pk=thread["id"])
    assert (recorded.title, recorded.citations_resolved) == ("Owls", 1)


def test_openai_calls_on_append_answer_are_read_as_an_import_reads_them(setup: Setup) -> None:
    thread = thread_create(owner=setup.alice, title="T")
    call_in = {
        "id": "c1",
        "type": "function",
        "function": {"name": "knowledge_search", "arguments": '{"query": "owls"}'},
    }
    result = call(
        setup, "append_answer", {"thread_id": str(thread.id), "content": "", "tool_calls": [call_in]}
    )
    assert not result.is_error
    assert result.structured_content["tool_calls"] == [
        {"id": "c1", "name": "knowledge_search", "args": {"query": "owls"}}
    ]


@pytest.mark.parametrize(
    ("name", "arguments", "words"),
    [
        ("record_question", {"content": "q"}, "arguments.thread_id: Field required"),
        ("record_question", {"thread_id": "<thread>", "content": "a\x00b"}, "NUL"),
        (
            "append_answer",
            {"thread_id": "<thread>", "content": "", "tool_calls": [{"id": 1, "name": "f", "args": {}}]},
            "'id' must be a string",
        ),
        ("append_answer", {"thread_id": "<thread>", "content": "", "tool_calls": "not a list"}, "tool_calls"),
    ],
    ids=["question without a thread", "question with a NUL", "a call id not a string", "calls not a list"],
)
def test_bad_recordings_are_refused_and_write_nothing(
    setup: Setup, name: str, arguments: dict[str, Any], words: str
) -> None:
    thread = thread_create(owner=setup.alice, title="T")
    arguments = {k: str(thread.id) if v == "<thread>" else v for k, v in arguments.items()}
    result = call(setup, name, arguments)
    assert result.is_error
    assert result.structured_content["status"] == 422
    assert words in result.structured_content["detail"]
    assert Message.objects.count() == 0


def test_another_users_thread_cannot_be_recorded_into(setup: Setup) -> None:
    alices = thread_create(owner=setup.alice, title="Alice's")
    result = call(
        setup, "record_question", {"thread_id": str(alices.id), "content": "Mine?"}, token=setup.bob_token
    )
    assert result.is_error
    assert (result.structured_content["status"], result.structured_content["code"]) == (404, "not_found")
    assert Message.objects.count() == 0


def test_the_structured_content_a_client_keeps_imports_with_its_citation_resolved(setup: Setup) -> None:
    # What langchain-mcp-adapters keeps of a tool result: the structured content (the API body),
    # with the receipt inside its artifact; the text it rewrites is not what is checked.
    found = call(setup, "knowledge_search", {"query": QUERY}).structured_content
    assert isinstance(found["artifact"][RECEIPT_KEY], str)
    handle = shared_handle(found["artifact"]["knowledge_sources"][0]["id"])
    body = {
        "messages": [
            {"type": "human", "content": "What do owls hunt?"},
            {
                "type": "ai",
                "content": "",
                "tool_calls": [{"id": "c1", "name": "knowledge_search", "args": {}}],
            },
            {
                "type": "tool",
                "name": "knowledge_search",
                "tool_call_id": "c1",
                "content": "[text block]",
                "artifact": found["artifact"],
            },
            {"type": "ai", "content": f"Mice [notes](#{handle})."},
        ]
    }
    mine = thread_import_body(owner=setup.alice, body=body)
    theirs = thread_import_body(owner=setup.bob, body=body)
    assert mine.citations_resolved == 1
    assert theirs.citations_resolved == 0
    (citation,) = [c for entry in thread_citations(thread=theirs) for c in entry.citations]
    assert citation.reason == REASON_UNSIGNED
