"""A knowledgeweb result in every wrapper a LangChain tool over the HTTP API puts it in; OpenAI
Responses items; a list of LangGraph state values (docs/interop.md).

The search body is the real API's (``POST /api/knowledge/search`` over the local index); the
wrappers are made by the real langchain-core tools and LangGraph's ``ToolNode``: a
``content_and_artifact`` tool whose artifact is the whole body, a tool that returns the body
(LangChain writes it as JSON text), and one that returns it as a text block. The
langchain-mcp-adapters wrapper needs the 1.x MCP SDK: tests/interop runs it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from langchain_core.load import dumps
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, messages_to_dict
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph

from knowledgeweb.knowledge import RESERVED_KEYS
from knowledgeweb.threads.interchange.imports import thread_import_body
from knowledgeweb.threads.models import Message, Thread
from tests.factories import BindingFactory, CollectionFactory, TokenFactory, UserFactory

pytestmark = pytest.mark.django_db

QUESTION = "What do owls do at night?"
CALL_ID = "call_owls"


@pytest.fixture
def alice() -> User:
    CollectionFactory.create(name="Nature", documents={"Field notes": "Owls hunt at night by ear."})
    user = UserFactory.create(username="alice")
    BindingFactory.create(name="nature", users=[user])
    return user


@pytest.fixture
def client(alice: User) -> Client:
    return TokenFactory.create(user=alice, name="wrappers").client()


@pytest.fixture
def body(client: Client) -> dict[str, Any]:
    """The API's own answer to a search, as every client receives it."""
    response = client.post(
        "/api/knowledge/search",
        json.dumps({"tool": "knowledge_search", "query": "owls"}),
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    found: dict[str, Any] = response.json()
    assert RESERVED_KEYS & set(found["artifact"])
    return found


def _link(text: str) -> str:
    start = text.index("[")
    return text[start : text.index(")", start) + 1]


def _tool_messages(body: dict[str, Any]) -> dict[str, ToolMessage]:
    """The tool message each wrapper makes, as the real tool answers a tool call."""

    @tool(response_format="content_and_artifact")
    def whole_body_artifact(query: str) -> tuple[str, dict[str, Any]]:
        """Search; the artifact is the API's whole body."""
        return body["content"], body

    @tool
    def whole_body_content(query: str) -> dict[str, Any]:
        """Search; the result is the API's whole body."""
        return body

    @tool
    def text_block_content(query: str) -> list[dict[str, str]]:
        """Search; the result is the body as a text block."""
        return [{"type": "text", "text": json.dumps(body)}]

    made = {}
    for wrapper in (whole_body_artifact, whole_body_content, text_block_content):
        # A tool invoked with a tool call answers the ToolMessage, as ToolNode has it run.
        call = {"type": "tool_call", "id": CALL_ID, "name": wrapper.name, "args": {"query": "owls"}}
        made[wrapper.name] = wrapper.invoke(call)
    return made


def _thread(message: ToolMessage, answer: str) -> list[Any]:
    call = {"id": CALL_ID, "name": message.name, "args": {"query": "owls"}}
    return [HumanMessage(QUESTION), AIMessage(content="", tool_calls=[call]), message, AIMessage(answer)]


def _states(client: Client, thread: Thread) -> list[str]:
    report = client.get(f"/api/threads/{thread.pk}/citations").json()
    return [c["state"] for m in report["messages"] for c in m["citations"]]


def test_each_langchain_wrapper_imports_as_the_search_result(
    alice: User, client: Client, body: dict[str, Any]
) -> None:
    made = _tool_messages(body)
    # What the real library wrote: the body as artifact, as JSON text, and as a text block.
    assert made["whole_body_artifact"].artifact == body
    assert json.loads(str(made["whole_body_content"].content)) == body
    assert isinstance(made["text_block_content"].content, list)
    answer = f"Owls hunt at night {_link(body['content'])}."
    bob = TokenFactory.create(user=UserFactory.create(username="bob"), name="bob").client()
    for name, message in made.items():
        serialized = json.dumps({"messages": messages_to_dict(_thread(message, answer))})
        # The user the server answered: the receipt in the body checks, the evidence is kept.
        response = client.post("/api/threads/import", serialized, content_type="application/json")
        assert response.status_code == 201, response.content
        thread = Thread.objects.get(pk=response.json()["id"])
        stored = Message.objects.get(thread=thread, type="tool")
        assert (stored.name, stored.content, stored.artifact) == (name, body["content"], body["artifact"])
        assert _states(client, thread) == ["resolved"], name
        # Another user: the evidence keys copied from the body do not pass; every other key does.
        response = bob.post("/api/threads/import", serialized, content_type="application/json")
        assert response.status_code == 201, response.content
        stored = Message.objects.get(thread_id=response.json()["id"], type="tool")
        assert stored.content == body["content"], name
        assert stored.artifact == {k: v for k, v in body["artifact"].items() if k not in RESERVED_KEYS}
        assert _states(bob, stored.thread) == ["unresolved"], name
        # The admin's import_thread --trusted keeps what the wrapper held.
        trusted = thread_import_body(owner=alice, body=json.loads(serialized), trusted=True)
        assert _states(client, trusted) == ["resolved"], name


def test_a_tool_message_holding_no_result_is_kept_as_written(alice: User) -> None:
    not_a_result = {"content": "a note", "artifact": {"x": 1}}  # no status: not the API's body
    messages = [
        {"type": "tool", "name": "other", "tool_call_id": "c", "content": json.dumps(not_a_result)},
        {"type": "tool", "name": "other", "tool_call_id": "c", "content": "plain", "artifact": not_a_result},
    ]
    thread = thread_import_body(owner=alice, body={"title": "t", "messages": messages})
    stored = list(Message.objects.filter(thread=thread).order_by("seq"))
    assert [m.content for m in stored] == [json.dumps(not_a_result), "plain"]
    assert stored[1].artifact == not_a_result


def test_a_tool_content_object_that_is_no_mcp_result_is_refused_and_nothing_written(client: Client) -> None:
    before = Thread.objects.count()
    messages = [{"role": "tool", "tool_call_id": "c", "content": {"note": "x"}}]
    response = client.post(
        "/api/threads/import", json.dumps({"messages": messages}), content_type="application/json"
    )
    assert response.status_code == 422
    assert (
        "message 1: 'content' must be a string or a list of content parts, not an object."
        in response.json()["detail"]
    )
    assert Thread.objects.count() == before


def _history(body: dict[str, Any]) -> list[dict[str, Any]]:
    """``[s.values for s in graph.get_state_history(config)]`` of a real two-step graph."""
    answer = AIMessage(f"Owls hunt at night {_link(body['content'])}.")
    tool_message = ToolMessage(
        body["content"], tool_call_id=CALL_ID, name="knowledge_search", artifact=body["artifact"]
    )
    replies = iter(
        [
            [
                AIMessage("", tool_calls=[{"id": CALL_ID, "name": "knowledge_search", "args": {}}]),
                tool_message,
            ],
            [answer],
        ]
    )

    def step(state: MessagesState) -> dict[str, Any]:
        return {"messages": next(replies)}

    graph = StateGraph(MessagesState)
    graph.add_node("step", step)
    graph.add_edge(START, "step")
    app = graph.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t1"}}
    # The compiled graph's state type is not inferred from StateGraph(MessagesState).
    app.invoke({"messages": [HumanMessage(QUESTION)]}, config)  # type: ignore[call-overload]
    app.invoke({"messages": []}, config)  # type: ignore[call-overload]
    return [snapshot.values for snapshot in app.get_state_history(config)]


def test_a_list_of_langgraph_state_values_imports_its_newest_state(
    alice: User, client: Client, body: dict[str, Any]
) -> None:
    history = _history(body)
    assert len(history) >= 3
    serialized = json.loads(dumps(history))
    response = client.post("/api/threads/import", json.dumps(serialized), content_type="application/json")
    assert response.status_code == 201, response.content
    thread = Thread.objects.get(pk=response.json()["id"])
    # The newest state (first in LangGraph's order) holds the whole run.
    assert [m.type for m in thread.messages.order_by("seq")] == ["human", "ai", "tool", "ai"]
    trusted = thread_import_body(owner=alice, body=serialized, trusted=True)
    assert _states(client, trusted) == ["resolved"]


def _responses_items(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A Responses API conversation as the API writes it: input items, then the output items."""
    return [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": QUESTION}]},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Search first."}]},
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": CALL_ID,
            "name": "knowledge_search",
            "arguments": json.dumps({"query": "owls"}),
            "status": "completed",
        },
        {"type": "function_call_output", "call_id": CALL_ID, "output": json.dumps(body)},
        {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "gAAAA..."},
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [
                {"type": "output_text", "text": f"Owls hunt {_link(body['content'])}.", "annotations": []}
            ],
        },
    ]


def test_openai_responses_items_import_with_reasoning_kept(
    alice: User, client: Client, body: dict[str, Any]
) -> None:
    items = _responses_items(body)
    for shape in (items, {"input": items, "instructions": "Be brief."}):
        response = client.post("/api/threads/import", json.dumps(shape), content_type="application/json")
        assert response.status_code == 201, response.content
        stored = list(Message.objects.filter(thread_id=response.json()["id"]).order_by("seq"))
        if isinstance(shape, dict):
            assert (stored[0].type, stored[0].content) == ("system", "Be brief.")
            stored = stored[1:]
        assert [m.type for m in stored] == ["human", "ai", "tool", "ai"]
        human, calling, result, answer = stored
        assert human.content == QUESTION
        assert calling.parts == [{"type": "thinking", "text": "Search first."}]
        assert calling.tool_calls == [{"id": CALL_ID, "name": "knowledge_search", "args": {"query": "owls"}}]
        assert (result.name, result.tool_call_id, result.content) == (
            "knowledge_search",
            CALL_ID,
            body["content"],
        )
        assert answer.parts == [{"type": "redacted_thinking"}]
        assert answer.content.startswith("Owls hunt [")
    trusted = thread_import_body(owner=alice, body=items, trusted=True)
    assert _states(client, trusted) == ["resolved"]


@pytest.mark.parametrize(
    ("item", "reason"),
    [
        (
            {"type": "function_call", "name": "f", "arguments": "{}"},
            "a function_call item needs its 'call_id'.",
        ),
        ({"type": "function_call_output", "output": "x"}, "a function_call_output item needs its 'call_id'."),
        ({"type": "function_call_output", "call_id": "c"}, "a function_call_output item needs its 'output'."),
        (
            {"type": "reasoning", "summary": "text"},
            "a reasoning item's 'summary' must be a list, not a string.",
        ),
        ({"type": "web_search_call", "id": "ws_1"}, "unknown message type 'web_search_call'"),
    ],
)
def test_a_bad_responses_item_is_refused_by_name_and_nothing_written(
    client: Client, item: dict[str, Any], reason: str
) -> None:
    before = Message.objects.count(), Thread.objects.count()
    items = [{"type": "message", "role": "user", "content": "hi"}, item]
    response = client.post("/api/threads/import", json.dumps(items), content_type="application/json")
    assert response.status_code == 422, response.content
    assert f"message 2: {reason}" in response.json()["detail"]
    assert (Message.objects.count(), Thread.objects.count()) == before
