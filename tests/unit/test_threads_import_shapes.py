"""Reading every LangChain / LangGraph message shape the import accepts (SPEC §7)."""

from __future__ import annotations

from typing import Any

import pytest

from knowledgeweb.threads.errors import MessageInvalidError
from knowledgeweb.threads.imports import MessageFields, message_fields_from_json

TOOL_KWARGS = {
    "content": "result text",
    "name": "knowledge_search",
    "tool_call_id": "call_1",
    "artifact": {"k": 1},
    "status": "error",
    "id": "lc-id-1",
}


def test_it_reads_a_plain_dict() -> None:
    fields = message_fields_from_json({"type": "tool", **TOOL_KWARGS})
    assert fields == MessageFields(
        type="tool",
        content="result text",
        name="knowledge_search",
        tool_call_id="call_1",
        artifact={"k": 1},
        status="error",
    )


def test_it_reads_the_type_data_wrapper() -> None:
    fields = message_fields_from_json({"type": "tool", "data": {**TOOL_KWARGS, "type": "tool"}})
    assert fields.type == "tool"
    assert fields.tool_call_id == "call_1"
    assert fields.artifact == {"k": 1}


def test_it_reads_the_lc_constructor_form() -> None:
    raw = {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "messages", "ToolMessage"],
        "kwargs": TOOL_KWARGS,
    }
    fields = message_fields_from_json(raw)
    assert fields.type == "tool"
    assert fields.name == "knowledge_search"
    assert fields.status == "error"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("human", "human"),
        ("HumanMessage", "human"),
        ("ai", "ai"),
        ("AIMessage", "ai"),
        ("AIMessageChunk", "ai"),
        ("tool", "tool"),
        ("ToolMessage", "tool"),
        ("system", "system"),
        ("SystemMessage", "system"),
    ],
)
def test_it_maps_langchain_type_names(name: str, expected: str) -> None:
    assert message_fields_from_json({"type": name, "content": "x"}).type == expected
    lc = {"lc": 1, "type": "constructor", "id": ["langchain", name], "kwargs": {"content": "x"}}
    assert message_fields_from_json(lc).type == expected


def test_it_joins_text_parts_in_order_without_a_separator() -> None:
    raw = {
        "type": "ai",
        "content": [{"type": "text", "text": "Hello, "}, "big ", {"type": "text", "text": "world"}],
    }
    assert message_fields_from_json(raw).content == "Hello, big world"


def test_it_defaults_missing_optional_fields() -> None:
    fields = message_fields_from_json({"type": "ai", "content": "", "name": None, "status": None})
    assert fields == MessageFields(type="ai", content="")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"type": "robot", "content": "x"}, "unknown message type 'robot'"),
        ({"content": "x"}, "'type' is required"),
        ({"type": "ai"}, "'content' is required"),
        ({"type": "ai", "content": None}, "'content' is required"),
        ({"type": "ai", "content": 3}, "'content' must be a string or a list of content parts, not a number"),
        (
            {"type": "ai", "content": [{"type": "text", "text": "ok"}, 7]},
            "content part 2 is a number; a part is a string or an object",
        ),
        ({"type": "ai", "content": [{"text": "ok"}]}, "content part 1 has no 'type' naming what it is"),
        (
            {"type": "ai", "content": [{"type": "text", "text": 5}]},
            "content part 1 ('text'): a text part needs a string 'text'",
        ),
        ({"type": "ai", "content": "x", "status": "done"}, "'status' must be 'success' or 'error'"),
        ({"type": "tool", "content": "x", "name": 7}, "'name' must be a string"),
        (["not", "an", "object"], "a message must be a JSON object, not a list"),
        ({"lc": 1, "type": "constructor", "id": "ToolMessage", "kwargs": {}}, "needs 'id' as a list"),
        ({"lc": 1, "type": "constructor", "id": ["x", "ToolMessage"], "kwargs": []}, "needs 'kwargs'"),
    ],
)
def test_it_rejects_bad_messages_with_a_clear_reason(raw: Any, message: str) -> None:
    with pytest.raises(MessageInvalidError) as caught:
        message_fields_from_json(raw)
    assert message in str(caught.value)
