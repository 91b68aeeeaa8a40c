"""Reading every LangChain / LangGraph message shape the import accepts (docs/architecture.md#http-api)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from knowledgeweb.threads.errors import MessageInvalidError
from knowledgeweb.threads.interchange.shapes import (
    MessageFields,
    join_turns,
    message_fields_from_json,
    read_import_body,
    read_message,
)

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
        ({"content": "x"}, "'type' is required (human, ai, tool or system), or 'role'"),
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


# --- Tool calls, parts and tool results ---------------------------------------------------------------

SEARCH = {"id": "c1", "name": "knowledge_search", "args": {"query": "q"}}


def test_langchain_invalid_tool_calls_keep_the_arguments_the_model_wrote() -> None:
    raw = {
        "type": "ai",
        "content": "",
        "tool_calls": [{**SEARCH, "type": "tool_call"}],
        "invalid_tool_calls": [
            {"id": "c2", "name": "f", "args": "{oops", "error": "bad", "type": "invalid_tool_call"}
        ],
    }
    assert message_fields_from_json(raw).tool_calls == (SEARCH, {"id": "c2", "name": "f", "args": "{oops"})


def test_older_messages_with_openai_calls_in_additional_kwargs_keep_them() -> None:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "knowledge_search", "arguments": '{"query": "q"}'},
    }
    raw = {"type": "ai", "content": "", "additional_kwargs": {"tool_calls": [call]}}
    assert message_fields_from_json(raw).tool_calls == (SEARCH,)


def test_a_deprecated_function_call_and_function_role_are_read() -> None:
    call = message_fields_from_json(
        {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": '{"a": 1}'}}
    )
    assert call.tool_calls == ({"id": "", "name": "f", "args": {"a": 1}},)
    result = message_fields_from_json({"role": "function", "name": "f", "content": "out"})
    assert (result.type, result.name, result.content) == ("tool", "f", "out")


def test_a_user_message_of_tool_results_becomes_tool_messages_then_the_text() -> None:
    raw = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "one"},
            {
                "type": "tool_result",
                "tool_use_id": "t2",
                "content": [{"type": "text", "text": "two"}],
                "is_error": True,
            },
            {"type": "text", "text": "And now?"},
        ],
    }
    read = read_message(raw)
    assert [(m.type, m.content, m.tool_call_id, m.status) for m in read] == [
        ("tool", "one", "t1", "success"),
        ("tool", "two", "t2", "error"),
        ("human", "And now?", "", "success"),
    ]
    assert read_message({"role": "user", "content": raw["content"][:1]}) == read[:1]


@pytest.mark.parametrize(
    ("part", "stored"),
    [
        ({"type": "thinking", "thinking": "t", "signature": "s"}, {"type": "thinking", "text": "t"}),
        ({"type": "reasoning", "reasoning": "r", "extras": {}}, {"type": "thinking", "text": "r"}),
        (
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "a"}]},
            {"type": "thinking", "text": "a"},
        ),
        ({"type": "redacted_thinking", "data": "xyz"}, {"type": "redacted_thinking"}),
        ({"type": "refusal", "refusal": "no"}, {"type": "refusal", "text": "no"}),
        (
            {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "AAAA"}},
            {"type": "image", "media_type": "image/jpeg", "url": ""},
        ),
        (
            {"type": "image", "source": {"type": "url", "url": "https://a.test/x.png"}},
            {"type": "image", "media_type": "", "url": "https://a.test/x.png"},
        ),
        (
            {"type": "image", "source_type": "base64", "mime_type": "image/png", "data": "AAAA"},
            {"type": "image", "media_type": "image/png", "url": ""},
        ),
        ({"type": "image", "url": "javascript:alert(1)"}, {"type": "image", "media_type": "", "url": ""}),
        (
            {"type": "image_url", "image_url": "https://a.test/y"},
            {"type": "image", "media_type": "", "url": "https://a.test/y"},
        ),
        (
            {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}},
            {"type": "file", "kind": "audio", "media_type": "audio/wav"},
        ),
        (
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "AA"}},
            {"type": "file", "kind": "document", "media_type": "application/pdf"},
        ),
        (
            {"type": "server_tool_use", "id": "s", "name": "web_search"},
            {"type": "other", "kind": "server_tool_use"},
        ),
        (
            {"type": "non_standard", "value": {"type": "thinking", "thinking": "wrapped"}},
            {"type": "thinking", "text": "wrapped"},
        ),
    ],
)
def test_every_non_text_part_is_kept_in_its_stored_form(part: dict[str, Any], stored: dict[str, Any]) -> None:
    fields = message_fields_from_json({"type": "ai", "content": [{"type": "text", "text": "a"}, part, "b"]})
    assert (fields.content, fields.parts) == ("ab", (stored,))


def test_a_tool_use_part_and_the_same_listed_call_are_one_call() -> None:
    raw = {
        "type": "ai",
        "content": [{"type": "tool_use", "id": "c1", "name": "knowledge_search", "input": {"query": "q"}}],
        "tool_calls": [{**SEARCH, "type": "tool_call"}],
    }
    assert message_fields_from_json(raw).tool_calls == (SEARCH,)


# --- Whole bodies -----------------------------------------------------------------------------------


def test_an_anthropic_request_keeps_its_system_prompt_first() -> None:
    body = read_import_body(
        {"model": "m", "system": "Be brief.", "messages": [{"role": "user", "content": "q"}]}
    )
    assert body.messages[0] == {"role": "system", "content": "Be brief."}


def test_a_langserve_output_of_one_message_is_a_thread_of_one() -> None:
    body = read_import_body({"output": {"type": "ai", "content": "hi"}, "metadata": {}})
    assert (body.messages, body.shape) == ([{"type": "ai", "content": "hi"}], "a LangServe response")


def test_the_history_list_without_timestamps_takes_the_first_state() -> None:
    states = [{"values": {"messages": [1, 2]}}, {"values": {"messages": [1]}}]
    assert read_import_body(states).messages == [1, 2]


# --- Wrapped results, Responses items, state values (docs/interop.md) ---------------------------

RESULT = {
    "content": "1 hit [citation:Notes](#knowledge-source-abc)",
    "artifact": {"knowledge_sources_version": 1, "knowledge_sources": []},
    "status": "success",
    "binding": "b",
    "provider": "local",
}


@pytest.mark.parametrize(
    "wrapped",
    [
        {"content": "text", "artifact": {"structured_content": RESULT}},
        {"content": "text", "artifact": RESULT},
        {"content": json.dumps(RESULT)},
        {"content": [{"type": "text", "text": json.dumps(RESULT), "id": "lc_1"}]},
        {"content": {"content": [{"type": "text", "text": "text"}], "structuredContent": RESULT}},
        {"content": {"jsonrpc": "2.0", "id": 1, "result": {"content": [], "structuredContent": RESULT}}},
        {"content": "text", "artifact": {"jsonrpc": "2.0", "result": {"structuredContent": RESULT}}},
    ],
)
def test_a_wrapped_result_is_read_as_the_result(wrapped: dict[str, Any]) -> None:
    fields = message_fields_from_json({"type": "tool", "name": "knowledge_search", **wrapped})
    assert (fields.content, fields.artifact, fields.status) == (
        RESULT["content"],
        RESULT["artifact"],
        "success",
    )
    assert fields.name == "knowledge_search"


def test_an_error_result_keeps_its_status() -> None:
    failed = {**RESULT, "status": "error", "artifact": {"error": {"code": "provider_timeout"}}}
    fields = message_fields_from_json({"type": "tool", "content": json.dumps(failed)})
    assert (fields.status, fields.artifact) == ("error", {"error": {"code": "provider_timeout"}})


@pytest.mark.parametrize(
    "near_miss",
    [
        {k: v for k, v in RESULT.items() if k != "status"},
        {**RESULT, "status": "done"},
        {**RESULT, "artifact": ["a list"]},
        {**RESULT, "content": 7},
    ],
)
def test_a_near_miss_is_no_result_and_is_kept_as_written(near_miss: dict[str, Any]) -> None:
    fields = message_fields_from_json(
        {"type": "tool", "content": "text", "artifact": {"structured_content": near_miss}}
    )
    assert (fields.content, fields.artifact) == ("text", {"structured_content": near_miss})


def test_only_a_tool_message_is_unwrapped() -> None:
    fields = message_fields_from_json({"type": "ai", "content": json.dumps(RESULT)})
    assert fields.content == json.dumps(RESULT)


def test_an_mcp_error_result_keeps_its_text() -> None:
    raw = {
        "content": [{"type": "text", "text": "forbidden"}],
        "isError": True,
        "structuredContent": {"code": "x"},
    }
    fields = message_fields_from_json({"role": "tool", "tool_call_id": "c", "content": raw})
    assert fields.content == "forbidden"


def test_a_list_of_state_values_imports_the_first_newest() -> None:
    newest = {"messages": [{"type": "human", "content": "q"}, {"type": "ai", "content": "a"}]}
    found = read_import_body([newest, {"messages": newest["messages"][:1]}, {}])
    assert found.messages == newest["messages"]
    assert found.shape == "a list of LangGraph state values"


def test_a_reasoning_item_without_visible_text_is_a_redacted_part() -> None:
    fields = message_fields_from_json({"type": "reasoning", "summary": [], "encrypted_content": "x"})
    assert (fields.type, fields.parts) == ("ai", ({"type": "redacted_thinking"},))


def test_responses_reasoning_text_is_read_when_there_is_no_summary() -> None:
    item = {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "think"}]}
    assert message_fields_from_json(item).parts == ({"type": "thinking", "text": "think"},)


def test_the_items_of_one_turn_join_and_a_reasoning_opens_the_next() -> None:
    items = [
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "r1"}]},
        {
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "A"}],
        },
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "c2", "name": "g", "arguments": '{"x": 1}'},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "r2"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "B"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "C"}]},
    ]
    read = [fields for item in items for fields in read_message(item)]
    joined, positions = join_turns(read, list(range(1, len(read) + 1)))
    assert [
        (m.content, [c["id"] for c in m.tool_calls], [p.get("text") for p in m.parts]) for m in joined
    ] == [
        ("A", ["c1", "c2"], ["r1"]),
        ("B", [], ["r2"]),
        ("C", [], []),
    ]
    assert positions == [1, 5, 7]


def test_other_shapes_never_join() -> None:
    read = [
        message_fields_from_json({"type": "ai", "content": ""}),
        message_fields_from_json({"type": "ai", "content": "x"}),
    ]
    assert join_turns(read, [1, 2])[0] == read


@pytest.mark.parametrize("kind", [{}, [], 3])
def test_a_type_that_is_no_string_is_refused_by_name(kind: Any) -> None:
    with pytest.raises(MessageInvalidError, match="unknown message type"):
        read_message({"type": kind, "content": "x"})
