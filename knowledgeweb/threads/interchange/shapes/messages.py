"""One message in any accepted shape (``read_message``).

- a LangChain dict: ``{"type", "content", "name", "tool_call_id", "artifact", "id", "status",
  "tool_calls", "invalid_tool_calls", "additional_kwargs", ...}`` (``model_dump``, LangServe,
  LangGraph Platform), with this project's own ``tool_calls`` and ``parts`` in their stored form;
- the ``{"type": ..., "data": {...}}`` wrapper of ``messages_to_dict``;
- the ``{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs": {...}}`` form of ``dumpd``;
- an OpenAI or Anthropic ``role`` dict: ``{"role": "user" | "assistant" | "system" |
  "developer" | "tool" | "function", "content", "tool_calls", "tool_call_id", "name", ...}``;
- an OpenAI Responses item: ``message``, ``function_call``, ``function_call_output``,
  ``reasoning`` (``shapes.responses``).

A tool message that holds a knowledgeweb result in a client's wrapper is read as that result
(``shapes.results``). The original ``id`` is not kept, since the store assigns its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from knowledgeweb.threads.errors import MessageInvalidError
from knowledgeweb.threads.interchange.shapes.calls import message_tool_calls
from knowledgeweb.threads.interchange.shapes.common import (
    MessageFields,
    json_kind,
    keys_of,
    optional_str,
    read_status,
)
from knowledgeweb.threads.interchange.shapes.content import read_content
from knowledgeweb.threads.interchange.shapes.docs import ACCEPTED_MESSAGES
from knowledgeweb.threads.interchange.shapes.responses import RESPONSES_ITEMS, read_responses_item
from knowledgeweb.threads.interchange.shapes.results import is_mcp_result, mcp_content_text, unwrap_result

#: LangChain's type names (class names, chunk class names and ``.type`` values).
TYPE_NAMES: dict[str, str] = {
    "human": "human",
    "HumanMessage": "human",
    "HumanMessageChunk": "human",
    "ai": "ai",
    "AIMessage": "ai",
    "AIMessageChunk": "ai",
    "tool": "tool",
    "ToolMessage": "tool",
    "ToolMessageChunk": "tool",
    "system": "system",
    "SystemMessage": "system",
    "SystemMessageChunk": "system",
}
#: OpenAI and Anthropic roles (and LangChain's own role names).
ROLE_NAMES: dict[str, str] = {
    "user": "human",
    "human": "human",
    "assistant": "ai",
    "ai": "ai",
    "system": "system",
    "developer": "system",
    "tool": "tool",
    "function": "tool",
}


def message_fields_from_json(raw: Any) -> MessageFields:
    """Read one message that stays one message (no tool results to split out)."""
    read = read_message(raw)
    if len(read) != 1:
        raise MessageInvalidError("a message holding tool results is read with read_message().")
    return read[0]


def read_message(raw: Any) -> list[MessageFields]:
    """Read one message in any accepted shape: the tool messages its ``tool_result`` parts
    hold, then the message itself (left out when only tool results were in it).

    Raises ``MessageInvalidError`` with a clear reason.
    """
    if not isinstance(raw, Mapping):
        raise MessageInvalidError(f"a message must be a JSON object, not {json_kind(raw)}.")
    if raw.get("lc") == 1 and raw.get("type") == "constructor":
        ident = raw.get("id")
        if not isinstance(ident, list) or not ident or not isinstance(ident[-1], str):
            raise MessageInvalidError("an 'lc' constructor needs 'id' as a list ending in the class name.")
        kwargs = raw.get("kwargs", {})
        if not isinstance(kwargs, Mapping):
            raise MessageInvalidError("an 'lc' constructor needs 'kwargs' as a JSON object.")
        return read_typed(_type_name(ident[-1]), kwargs)
    if "data" in raw and isinstance(raw.get("data"), Mapping) and "content" not in raw:
        return read_typed(_type_name(raw.get("type")), raw["data"])
    kind = raw.get("type")
    if isinstance(kind, str) and kind in RESPONSES_ITEMS:
        return [unwrap_result(read_responses_item(raw), raw.get("output"))]
    if kind == "message" and "role" in raw:
        # A Responses message item: its status (completed, in_progress) is the item's, not a result's.
        fields = read_typed(_role_name(raw["role"]), {k: v for k, v in raw.items() if k != "status"})
        return [_as_turn_item(f) for f in fields]
    if "type" in raw and raw["type"] != "message":
        return read_typed(_type_name(raw["type"]), raw)
    if "role" in raw:
        return read_typed(_role_name(raw["role"]), raw)
    raise MessageInvalidError(
        f"'type' is required (human, ai, tool or system), or 'role' (user, assistant, system, "
        f"developer or tool); found an object{keys_of(raw)}. A message is {ACCEPTED_MESSAGES}."
    )


def _as_turn_item(fields: MessageFields) -> MessageFields:
    return replace(fields, turn_item=True) if fields.type == "ai" else fields


def _type_name(value: Any) -> str:
    if value is None:
        raise MessageInvalidError("'type' is required (human, ai, tool or system).")
    if not isinstance(value, str) or value not in TYPE_NAMES:
        raise MessageInvalidError(
            f"unknown message type {value!r}; expected human, ai, tool or system (or an OpenAI "
            f"Responses item: message, {', '.join(sorted(RESPONSES_ITEMS))})."
        )
    return TYPE_NAMES[value]


def _role_name(value: Any) -> str:
    if not isinstance(value, str) or value not in ROLE_NAMES:
        raise MessageInvalidError(
            f"unknown message role {value!r}; expected user, assistant, system, developer or tool."
        )
    return ROLE_NAMES[value]


def read_typed(type_: str, data: Mapping[str, Any]) -> list[MessageFields]:
    """A message of a known type from its fields (any framework's names for them)."""
    calls = message_tool_calls(data)
    raw_content = data.get("content")
    if raw_content is None and not (type_ == "ai" and (calls or "tool_calls" in data or "refusal" in data)):
        raise MessageInvalidError("'content' is required (a string or a list of content parts).")
    if type_ == "tool" and isinstance(raw_content, Mapping) and is_mcp_result(raw_content):
        content = read_content(None)
        content.text = mcp_content_text(raw_content)
    else:
        content = read_content(raw_content)
    known = {call["id"] for call in calls if call["id"]}
    calls += [call for call in content.calls if not call["id"] or call["id"] not in known]
    parts = list(content.parts)
    refusal = data.get("refusal")
    if isinstance(refusal, str) and refusal:
        parts.append({"type": "refusal", "text": refusal})
    reasoning = data.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        # DeepSeek-style and other OpenAI-compatible servers put visible reasoning here.
        parts.insert(0, {"type": "thinking", "text": reasoning})
    if "parts" in data and data["parts"] is not None:
        # This project's own export: parts already in their stored form (checked on write).
        if not isinstance(data["parts"], list):
            raise MessageInvalidError(f"'parts' must be a list, not {json_kind(data['parts'])}.")
        parts = [*data["parts"], *parts]
    status = data.get("status")
    name = optional_str(data, "name")
    if not name and type_ == "tool" and data.get("role") == "function":
        raise MessageInvalidError("a 'function' message needs its 'name'.")
    message = MessageFields(
        type=type_,
        content=content.text,
        name=name,
        tool_call_id=optional_str(data, "tool_call_id"),
        artifact=data.get("artifact"),
        status="success" if status is None else read_status(status),
        tool_calls=tuple(calls),
        parts=tuple(parts),
        named_by_call=type_ == "tool" and "role" in data and not name,
    )
    message = unwrap_result(message, raw_content)
    results = [unwrap_result(result, None) for result in content.results]
    if results and not (message.content or message.parts or message.tool_calls):
        return results
    return [*results, message]
