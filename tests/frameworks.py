"""Threads as agent frameworks write them, for the import tests.

LangChain and LangGraph shapes are produced here by the real libraries (pinned
development dependencies): a real LangGraph graph with a checkpointer runs a real
``create_retriever_tool`` through ``ToolNode``, and its state is serialized with
``messages_to_dict``, ``dumpd``/``dumps``, ``model_dump`` and
``convert_to_openai_messages``. Where no offline library produces a shape (the
LangGraph Platform's thread state and ``/history`` wire format, a LangServe
response, Anthropic's Messages format), it is built from the published API
reference around the real library's serialization: the Platform and LangServe
serialize messages with ``model_dump()``; the field names of a Platform thread
state are those of ``langgraph_sdk.schema.ThreadState``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, get_type_hints
from uuid import uuid4

from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.load import dumpd, dumps
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_openai_messages,
    messages_to_dict,
)
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import create_retriever_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import StateSnapshot
from langgraph_sdk.schema import ThreadState

QUESTION = "How are citations verified?"
QUERY = "citation verification"
ANSWER = "Each citation is checked against the evidence retrieved before it."
EXCERPT = "Every citation is resolved against validated evidence."


class _Corpus(BaseRetriever):
    """A retriever over one fixed document (the graph is real; the corpus need not be)."""

    def _get_relevant_documents(self, query: str, *, run_manager: Any = None) -> list[Document]:
        return [Document(page_content=EXCERPT, metadata={"source": "guide.md", "query": query})]


def json_round(value: Any) -> Any:
    """What a value looks like after the wire: JSON out and back."""
    return json.loads(json.dumps(value))


@dataclass(frozen=True)
class GraphRun:
    messages: list[BaseMessage]
    snapshot: StateSnapshot
    history: list[StateSnapshot]


def run_langgraph_agent(question: str = QUESTION) -> GraphRun:
    """A real LangGraph agent: model → ToolNode(create_retriever_tool) → model, checkpointed."""
    tool = create_retriever_tool(
        _Corpus(),
        "knowledge_search",
        "Search the knowledge base.",
        response_format="content_and_artifact",
    )
    replies = iter(
        [
            AIMessage(
                content="",
                tool_calls=[{"name": "knowledge_search", "args": {"query": QUERY}, "id": "call_1"}],
            ),
            AIMessage(content=ANSWER),
        ]
    )
    model = GenericFakeChatModel(messages=replies)

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([tool]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    app = graph.compile(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": str(uuid4())}}
    question_state: MessagesState = {"messages": [HumanMessage(question)]}
    # The compiled graph's state type is not inferred from StateGraph(MessagesState).
    app.invoke(question_state, config)  # type: ignore[arg-type]
    snapshot = app.get_state(config)
    return GraphRun(list(snapshot.values["messages"]), snapshot, list(app.get_state_history(config)))


def platform_state(snapshot: StateSnapshot) -> dict[str, Any]:
    """A LangGraph Platform ``GET /threads/{id}/state`` body for a real snapshot."""
    configurable = snapshot.config["configurable"]
    parent = (snapshot.parent_config or {}).get("configurable")
    state = {
        "values": _model_dumped(snapshot.values),
        "next": list(snapshot.next),
        "tasks": [],
        "checkpoint": {
            "thread_id": configurable["thread_id"],
            "checkpoint_ns": configurable.get("checkpoint_ns", ""),
            "checkpoint_id": configurable["checkpoint_id"],
            "checkpoint_map": None,
        },
        "metadata": snapshot.metadata,
        "created_at": snapshot.created_at,
        "parent_checkpoint": dict(parent) if parent else None,
        "interrupts": [],
    }
    assert set(state) <= set(get_type_hints(ThreadState)), set(state) - set(get_type_hints(ThreadState))
    return json_round(state)


def _model_dumped(value: Any) -> Any:
    """How the Platform and LangServe write a value: messages (anywhere in it) by ``model_dump()``."""
    if isinstance(value, BaseMessage):
        return value.model_dump()
    if isinstance(value, list):
        return [_model_dumped(item) for item in value]
    if isinstance(value, dict):
        return {key: _model_dumped(item) for key, item in value.items()}
    return value


def langserve_response(output: Any) -> dict[str, Any]:
    """A LangServe ``/invoke`` response: the output serialized with ``model_dump()``, and run metadata."""
    return json_round(
        {"output": _model_dumped(output), "metadata": {"run_id": str(uuid4()), "feedback_tokens": []}}
    )


# --- Every shape of the same LangGraph run ------------------------------------------------------------

#: name -> builder of the import body from a real run
Shape = Callable[[GraphRun], Any]
LANGGRAPH_SHAPES: dict[str, Shape] = {
    "messages_to_dict list": lambda run: json_round(messages_to_dict(run.messages)),
    "dumps list (lc constructors)": lambda run: json.loads(dumps(run.messages)),
    "dumpd of the state values": lambda run: json_round(dumpd(run.snapshot.values)),
    "model_dump list": lambda run: json_round([m.model_dump() for m in run.messages]),
    "convert_to_openai_messages list": lambda run: json_round(convert_to_openai_messages(run.messages)),
    "titled body of messages_to_dict": lambda run: {
        "title": "Titled",
        "agent_name": "graph",
        "messages": json_round(messages_to_dict(run.messages)),
    },
    "Platform runs/wait values": lambda run: json_round(_model_dumped(run.snapshot.values)),
    "Platform thread state": lambda run: platform_state(run.snapshot),
    "Platform /history list": lambda run: [platform_state(s) for s in run.history],
    "LangServe output list": lambda run: langserve_response(run.messages),
    "LangServe output state": lambda run: langserve_response({"messages": run.messages}),
}


# --- Anthropic Messages and OpenAI Chat Completions, from their API references -----------------------

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def anthropic_request() -> dict[str, Any]:
    """A Messages API request body: system prompt, an image, thinking, tool_use and tool_result."""
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": [{"type": "text", "text": "Cite your sources."}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                    {"type": "text", "text": QUESTION},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "I should search first.", "signature": "EqQBCgIYAhIM"},
                    {"type": "text", "text": "Let me search."},
                    {
                        "type": "tool_use",
                        "id": "toolu_01A",
                        "name": "knowledge_search",
                        "input": {"query": QUERY},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_01A",
                        "content": [{"type": "text", "text": EXCERPT}],
                    },
                    {"type": "text", "text": "Please be brief."},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "redacted_thinking", "data": "EmwKAhgB"},
                    {"type": "text", "text": ANSWER},
                ],
            },
        ],
    }


def openai_messages() -> list[dict[str, Any]]:
    """Chat Completions messages: developer prompt, an image URL, a tool call with JSON-string
    arguments, its ``role: tool`` result, and a refusal."""
    return [
        {"role": "developer", "content": "Cite your sources."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": QUESTION},
                {"type": "image_url", "image_url": {"url": "https://example.com/chart.png", "detail": "low"}},
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "refusal": None,
            "tool_calls": [
                {
                    "id": "call_abc",
                    "type": "function",
                    "function": {"name": "knowledge_search", "arguments": json.dumps({"query": QUERY})},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_abc", "content": EXCERPT},
        {"role": "assistant", "content": ANSWER, "refusal": None},
    ]


def langchain_anthropic_messages() -> list[BaseMessage]:
    """LangChain messages holding Anthropic content blocks, as langchain-anthropic returns them."""
    return [
        HumanMessage(QUESTION),
        AIMessage(
            content=[
                {"type": "thinking", "thinking": "Search first.", "signature": "sig"},
                {
                    "type": "tool_use",
                    "id": "toolu_01B",
                    "name": "knowledge_search",
                    "input": {"query": QUERY},
                },
            ],
            tool_calls=[{"name": "knowledge_search", "args": {"query": QUERY}, "id": "toolu_01B"}],
            response_metadata={"model_provider": "anthropic"},
        ),
        ToolMessage(EXCERPT, tool_call_id="toolu_01B", name="knowledge_search"),
        AIMessage(ANSWER),
    ]


def langchain_v1_blocks() -> list[BaseMessage]:
    """The same exchange in LangChain's standard (v1) content blocks, from ``content_blocks``."""
    anthropic = langchain_anthropic_messages()
    call = anthropic[1]
    assert isinstance(call, AIMessage)
    return [
        SystemMessage("Cite your sources."),
        anthropic[0],
        AIMessage(content=list(call.content_blocks), tool_calls=call.tool_calls),  # type: ignore[arg-type]
        *anthropic[2:],
    ]


def types_of(messages: Sequence[Any]) -> list[str]:
    return [m.type for m in messages]
