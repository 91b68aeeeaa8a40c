"""Reading LangChain / LangGraph message JSON into plain message fields (SPEC §7).

Accepted shapes for one message:

- a plain dict: ``{"type", "content", "name", "tool_call_id", "artifact", "id", "status"}``;
- the ``{"type": ..., "data": {...}}`` wrapper of ``messages_to_dict``;
- the ``{"lc": 1, "type": "constructor", "id": [..., "ToolMessage"], "kwargs": {...}}`` form.

``content`` is a string or a list of text parts (``{"type": "text", "text": ...}``
or bare strings), joined without a separator as LangChain does. Other keys
(``additional_kwargs``, ``tool_calls``, ``response_metadata``, ...) are ignored;
the original ``id`` is not kept, since the store assigns its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from knowledgeweb.threads.errors import MessageInvalidError

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


@dataclass(frozen=True, slots=True)
class MessageFields:
    """One message as the store takes it, before any write."""

    type: str
    content: str
    name: str = ""
    tool_call_id: str = ""
    artifact: Any = None
    status: str = "success"


def message_fields_from_json(raw: Any) -> MessageFields:
    """Read one message in any accepted shape. Raises ``MessageInvalidError`` with a clear reason."""
    if not isinstance(raw, Mapping):
        raise MessageInvalidError(f"a message must be a JSON object, not {_json_kind(raw)}.")
    if raw.get("lc") == 1 and raw.get("type") == "constructor":
        ident = raw.get("id")
        if not isinstance(ident, list) or not ident or not isinstance(ident[-1], str):
            raise MessageInvalidError("an 'lc' constructor needs 'id' as a list ending in the class name.")
        kwargs = raw.get("kwargs", {})
        if not isinstance(kwargs, Mapping):
            raise MessageInvalidError("an 'lc' constructor needs 'kwargs' as a JSON object.")
        return _fields(_type_name(ident[-1]), kwargs)
    if "data" in raw and isinstance(raw.get("data"), Mapping) and "content" not in raw:
        return _fields(_type_name(raw.get("type")), raw["data"])
    return _fields(_type_name(raw.get("type")), raw)


def _type_name(value: Any) -> str:
    if value is None:
        raise MessageInvalidError("'type' is required (human, ai, tool or system).")
    if not isinstance(value, str) or value not in TYPE_NAMES:
        raise MessageInvalidError(f"unknown message type {value!r}; expected human, ai, tool or system.")
    return TYPE_NAMES[value]


def _fields(type_: str, data: Mapping[str, Any]) -> MessageFields:
    if "content" not in data or data["content"] is None:
        raise MessageInvalidError("'content' is required (a string or a list of text parts).")
    status = data.get("status")
    return MessageFields(
        type=type_,
        content=content_text(data["content"]),
        name=_optional_str(data, "name"),
        tool_call_id=_optional_str(data, "tool_call_id"),
        artifact=data.get("artifact"),
        status="success" if status is None else _status(status),
    )


def content_text(value: Any) -> str:
    """A message's content as text: a string, or the text parts of a list joined in order."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise MessageInvalidError(
            f"'content' must be a string or a list of text parts, not {_json_kind(value)}."
        )
    texts: list[str] = []
    for index, part in enumerate(value, start=1):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, Mapping) and part.get("type") == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, Mapping) and part.get("type") == "text":
            raise MessageInvalidError(f"content part {index} is a text part without a string 'text'.")
        else:
            kind = part.get("type") if isinstance(part, Mapping) else _json_kind(part)
            raise MessageInvalidError(f"content part {index} is {kind!r}; only text parts are accepted.")
    return "".join(texts)


def _optional_str(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise MessageInvalidError(f"'{key}' must be a string, not {_json_kind(value)}.")
    return value


def _status(value: Any) -> str:
    if value not in ("success", "error"):
        raise MessageInvalidError(f"'status' must be 'success' or 'error', not {value!r}.")
    return str(value)


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"
