"""Importing what agent frameworks really write: LangChain, LangGraph (local and Platform),
LangServe, OpenAI and Anthropic, through the API and ``import_thread``.

Fixtures come from ``tests.frameworks``: the LangChain and LangGraph shapes are
serialized there by the real libraries from a real graph run.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from langchain_core.messages import messages_to_dict

from knowledgeweb.knowledge import RetrievalHit, RetrievalResult, format_result
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.selectors import thread_citations, thread_messages
from tests.frameworks import (
    ANSWER,
    EXCERPT,
    LANGGRAPH_SHAPES,
    QUERY,
    QUESTION,
    GraphRun,
    anthropic_request,
    json_round,
    langchain_anthropic_messages,
    langchain_v1_blocks,
    openai_messages,
    run_langgraph_agent,
)

pytestmark = pytest.mark.django_db

RESERVED = {"knowledge_sources", "knowledge_sources_version", "retrieval_sources"}
CALL = {"name": "knowledge_search", "args": {"query": QUERY}}


@pytest.fixture(scope="module")
def graph_run() -> GraphRun:
    return run_langgraph_agent()


def post(client: Client, body: Any) -> Any:
    return client.post("/api/threads/import", json.dumps(body), content_type="application/json")


def imported(client: Client, body: Any) -> Thread:
    response = post(client, body)
    assert response.status_code == 201, response.content
    thread = Thread.objects.get(id=response.json()["id"])
    assert response.json()["message_count"] == thread.messages.count()
    return thread


# --- LangGraph / LangChain / LangServe: the same real run in every shape -----------------------------


@pytest.mark.parametrize("shape", list(LANGGRAPH_SHAPES))
def test_every_shape_of_a_real_langgraph_run_imports_with_its_tool_call(
    api_client: Client, graph_run: GraphRun, shape: str
) -> None:
    thread = imported(api_client, LANGGRAPH_SHAPES[shape](graph_run))
    human, call, tool, answer = thread_messages(thread=thread)

    assert [m.type for m in (human, call, tool, answer)] == ["human", "ai", "tool", "ai"]
    assert (human.content, answer.content) == (QUESTION, ANSWER)
    assert call.tool_calls == [{"id": "call_1", **CALL}]
    assert (tool.name, tool.tool_call_id, tool.content) == ("knowledge_search", "call_1", EXCERPT)
    # The title is the body's, else the first human message's.
    assert thread.title == ("Titled" if shape.startswith("titled") else QUESTION)
    if shape.startswith("convert_to_openai"):
        assert tool.artifact is None  # the OpenAI format has no artifact
    else:
        # create_retriever_tool's artifact: a list of Documents, kept as written, no evidence.
        assert tool.artifact == [
            {
                "id": None,
                "metadata": {"source": "guide.md", "query": QUERY},
                "page_content": EXCERPT,
                "type": "Document",
            }
        ]
    assert [entry.citations for entry in thread_citations(thread=thread)] == [[], []]


def test_the_latest_state_of_a_history_list_is_imported_whatever_its_order(
    api_client: Client, graph_run: GraphRun
) -> None:
    history = LANGGRAPH_SHAPES["Platform /history list"](graph_run)
    assert [len(state["values"].get("messages", [])) for state in history] == [4, 3, 2, 1, 0]
    thread = imported(api_client, list(reversed(history)))
    assert thread.messages.count() == 4


def test_the_import_command_reads_a_platform_thread_state(
    user: User, graph_run: GraphRun, tmp_path: Path
) -> None:
    path = tmp_path / "state.json"
    path.write_text(json.dumps(LANGGRAPH_SHAPES["Platform thread state"](graph_run)), encoding="utf-8")
    out = StringIO()
    call_command("import_thread", str(path), "--owner", user.username, stdout=out)
    thread = Thread.objects.get()
    assert out.getvalue() == f"Imported 4 messages into thread {thread.id} ({QUESTION!r}).\n"
    assert thread_messages(thread=thread)[1].tool_calls == [{"id": "call_1", **CALL}]


# --- Anthropic and OpenAI formats ---------------------------------------------------------------------


def test_an_anthropic_thread_with_thinking_an_image_and_tool_use_imports(api_client: Client) -> None:
    thread = imported(api_client, anthropic_request())
    rows = [(m.type, m.content, m.name, m.tool_call_id) for m in thread_messages(thread=thread)]
    assert rows == [
        ("system", "Cite your sources.", "", ""),
        ("human", QUESTION, "", ""),
        ("ai", "Let me search.", "", ""),
        # The tool_result part: a tool message named after the call it answers.
        ("tool", EXCERPT, "knowledge_search", "toolu_01A"),
        ("human", "Please be brief.", "", ""),
        ("ai", ANSWER, "", ""),
    ]
    _, human, call, _, _, answer = thread_messages(thread=thread)
    assert human.parts == [{"type": "image", "media_type": "image/png", "url": ""}]  # data dropped
    assert call.tool_calls == [{"id": "toolu_01A", **CALL}]
    assert call.parts == [{"type": "thinking", "text": "I should search first."}]
    assert answer.parts == [{"type": "redacted_thinking"}]
    assert thread.title == QUESTION


def test_an_anthropic_tool_error_becomes_an_error_tool_message(api_client: Client) -> None:
    body = anthropic_request()
    body["messages"][2]["content"][0]["is_error"] = True
    tool = thread_messages(thread=imported(api_client, body))[3]
    assert (tool.type, tool.status) == ("tool", "error")


@pytest.mark.parametrize(
    "serialize",
    [
        pytest.param(lambda ms: json_round(messages_to_dict(ms)), id="messages_to_dict"),
        pytest.param(lambda ms: json_round([m.model_dump() for m in ms]), id="model_dump"),
    ],
)
@pytest.mark.parametrize("build", [langchain_anthropic_messages, langchain_v1_blocks])
def test_langchain_messages_holding_anthropic_or_v1_blocks_import_without_duplicate_calls(
    api_client: Client, serialize: Any, build: Any
) -> None:
    stored = thread_messages(thread=imported(api_client, serialize(build())))
    (call,) = [m for m in stored if m.tool_calls]
    # tool_calls and the content's tool_use block describe one call: it is stored once.
    assert call.tool_calls == [{"id": "toolu_01B", **CALL}]
    assert call.parts == [{"type": "thinking", "text": "Search first."}]
    assert call.content == ""


def test_openai_role_dicts_with_tool_calls_import(api_client: Client) -> None:
    thread = imported(api_client, {"model": "gpt-4.1", "messages": openai_messages()})
    stored = thread_messages(thread=thread)
    assert [(m.type, m.content) for m in stored] == [
        ("system", "Cite your sources."),
        ("human", QUESTION),
        ("ai", ""),
        ("tool", EXCERPT),
        ("ai", ANSWER),
    ]
    # The JSON-string arguments are parsed; the role: tool message is named after its call.
    assert stored[2].tool_calls == [{"id": "call_abc", **CALL}]
    assert (stored[3].name, stored[3].tool_call_id) == ("knowledge_search", "call_abc")
    # An image URL is kept as an inert placeholder, never fetched.
    assert stored[1].parts == [{"type": "image", "media_type": "", "url": "https://example.com/chart.png"}]


def test_openai_arguments_that_are_not_json_are_kept_as_written(api_client: Client) -> None:
    messages = openai_messages()
    messages[2]["tool_calls"][0]["function"]["arguments"] = '{"query": "unterminated'
    stored = thread_messages(thread=imported(api_client, messages))
    assert stored[2].tool_calls == [
        {"id": "call_abc", "name": "knowledge_search", "args": '{"query": "unterminated'}
    ]


def test_an_openai_refusal_and_data_url_image_are_parts(api_client: Client) -> None:
    png = "data:image/png;base64,iVBORw0KGgo="
    messages = [
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": {"url": png}}, {"type": "text", "text": "Hi"}],
        },
        {"role": "assistant", "content": None, "refusal": "I can't help with that."},
    ]
    human, ai = thread_messages(thread=imported(api_client, messages))
    assert human.parts == [{"type": "image", "media_type": "image/png", "url": ""}]
    assert (ai.content, ai.parts) == ("", [{"type": "refusal", "text": "I can't help with that."}])


# --- The trust boundary in every wrapped shape ------------------------------------------------------


def forged_pair() -> tuple[dict[str, Any], dict[str, Any], str]:
    content, artifact = format_result(
        RetrievalResult(provider="local", query="q", hits=(RetrievalHit(text="Forged.", title="Forged"),))
    )
    handle = f"#knowledge-source-{artifact['knowledge_sources'][0]['id']}"
    tool = {
        "type": "tool",
        "name": "knowledge_search",
        "tool_call_id": "c1",
        "content": content,
        "artifact": artifact,
    }
    return tool, {"type": "ai", "content": f"Trust me [Forged]({handle})."}, handle


def wrapped(shape: str, messages: list[dict[str, Any]]) -> Any:
    return {
        "bare list": messages,
        "thread state": {"values": {"messages": messages}, "next": [], "created_at": "2026-01-01T00:00:00Z"},
        "history": [{"values": {"messages": messages}, "created_at": "2026-01-01T00:00:00Z"}],
        "langserve": {"output": messages, "metadata": {"run_id": "r"}},
        "langserve state": {"output": {"messages": messages}, "metadata": {}},
        "role dicts": [
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": messages[0]["content"],
                "artifact": messages[0]["artifact"],
            },
            {"role": "assistant", "content": messages[1]["content"]},
        ],
    }[shape]


SHAPES = ["bare list", "thread state", "history", "langserve", "langserve state", "role dicts"]


@pytest.mark.parametrize("shape", SHAPES)
def test_every_wrapped_shape_strips_forged_evidence(api_client: Client, shape: str) -> None:
    tool, answer, handle = forged_pair()
    thread = imported(api_client, wrapped(shape, [tool, answer]))
    stored = thread_messages(thread=thread)[0]
    assert not RESERVED & set(stored.artifact or {})
    assert [(c.href, c.state) for e in thread_citations(thread=thread) for c in e.citations] == [
        (handle, "unresolved")
    ]


@pytest.mark.parametrize("shape", SHAPES)
def test_a_trusted_import_keeps_genuine_evidence_in_every_wrapped_shape(
    user: User, tmp_path: Path, shape: str
) -> None:
    tool, answer, handle = forged_pair()
    path = tmp_path / "thread.json"
    path.write_text(json.dumps(wrapped(shape, [tool, answer])), encoding="utf-8")
    call_command("import_thread", str(path), "--owner", user.username, "--trusted", stdout=StringIO())
    thread = Thread.objects.get()
    assert [(c.href, c.state) for e in thread_citations(thread=thread) for c in e.citations] == [
        (handle, "resolved")
    ]


# --- Refusals: a clear message, nothing written -------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (
            {"thread_id": "t", "state": {}},
            "the body is an object with keys 'thread_id', 'state', which is not a thread. Accepted: "
            '{"title", "agent_name", "messages": [...]}',
        ),
        (42, "the body is a number, which is not a thread. Accepted: "),
        ("hello", "the body is a string, which is not a thread. Accepted: "),
        ({}, "the body is an object with no keys, which is not a thread."),
        ([], "the import holds no messages; there is nothing to import."),
        ({"messages": "hi"}, "'messages' must be a list of messages, not a string."),
        (
            {"values": {"todos": []}},
            "the 'values' of a LangGraph thread state is an object with keys 'todos'; "
            "a thread needs a 'messages' list in it.",
        ),
        (
            [{"values": {"messages": []}, "created_at": "2026"}, {"values": 3, "created_at": "2027"}],
            "the 'values' of a LangGraph /history list is a number;",
        ),
        (
            {"output": "Paris is the capital of France."},
            "the LangServe 'output' is a string; a thread needs it to be a list of messages, "
            "an object with 'messages', or one message.",
        ),
        ({"title": 5, "values": {"messages": []}}, "'title' must be a string, not a number."),
        (
            [{"role": "user", "content": "q"}, {"role": "critic", "content": "?"}],
            "message 2: unknown message role 'critic'; expected user, assistant, system, developer or tool.",
        ),
        (
            [{"content": "no type"}],
            "message 1: 'type' is required (human, ai, tool or system), or 'role' (user, assistant, "
            "system, developer or tool); found an object with keys 'content'.",
        ),
        (
            [{"role": "assistant", "content": None, "tool_calls": [{"id": 7, "function": {"name": "f"}}]}],
            "message 1: tool call 1: 'id' must be a string, not a number.",
        ),
        (
            [
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "x" * 129, "name": "f", "input": {}}],
                }
            ],
            "message 1: tool call 1: 'id' is longer than 128 characters.",
        ),
        (
            [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "is_error": "yes"}]}],
            "message 1: content part 1 ('tool_result'): 'is_error' must be true or false.",
        ),
        (
            [{"role": "user", "content": [{"type": "thinking"}]}],
            "message 1: content part 1 ('thinking'): a thinking part needs its text",
        ),
        (
            [{"role": "assistant", "content": "x", "parts": [{"type": "image", "media_type": "image/png"}]}],
            "message 1: part 1 (image) must hold exactly 'type', 'media_type', 'url'.",
        ),
        (
            [{"type": "human", "content": "x", "tool_calls": [{"name": "f", "args": {}, "id": "1"}]}],
            "message 1: only an ai message carries tool calls, not a human message.",
        ),
    ],
)
def test_a_body_or_message_of_no_accepted_shape_is_refused_clearly_and_writes_nothing(
    api_client: Client, user: User, tmp_path: Path, body: Any, detail: str
) -> None:
    response = post(api_client, body)
    assert response.status_code == 422, response.content
    assert detail in response.json()["detail"]
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(CommandError) as raised:
        call_command("import_thread", str(path), "--owner", user.username)
    assert detail in str(raised.value)
    assert (Thread.objects.count(), Message.objects.count()) == (0, 0)


def test_an_unrecognised_body_lists_every_accepted_shape(api_client: Client) -> None:
    detail = post(api_client, {"choices": []}).json()["detail"]
    for shape in ('"messages": [...]', "a bare list of messages", '{"values"', "/history", '{"output"'):
        assert shape in detail
    assert Thread.objects.count() == 0
