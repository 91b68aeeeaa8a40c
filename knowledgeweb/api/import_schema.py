"""The OpenAPI description of one imported message, in each shape the import reads.

The schema documents; it does not validate. ``thread_import`` reads every message
itself (``knowledgeweb.threads.imports``), so that an error names the message by its
position ("message 57: ...") and so the shapes it accepts can grow without a schema
change refusing them first. The description is therefore never stricter than the
reader: only ``type`` is required (every shape has one) and unknown keys are allowed
(LangChain's ``additional_kwargs``, ``response_metadata``... are ignored).
"""

from __future__ import annotations

from typing import Any

TYPE_NAMES = [
    "human",
    "ai",
    "tool",
    "system",
    "HumanMessage",
    "AIMessage",
    "ToolMessage",
    "SystemMessage",
    "HumanMessageChunk",
    "AIMessageChunk",
    "ToolMessageChunk",
    "SystemMessageChunk",
]

_TEXT_PART: dict[str, Any] = {
    "type": "object",
    "description": 'A content part: {"type": "text", "text": ...}; only text parts are kept.',
    "properties": {"type": {"type": "string"}, "text": {"type": "string"}},
    "required": ["type"],
}

_FIELDS: dict[str, Any] = {
    "content": {
        "description": "A string, or a list of text parts (or strings) joined in order.",
        "anyOf": [
            {"type": "string"},
            {"type": "array", "items": {"anyOf": [{"type": "string"}, _TEXT_PART]}},
        ],
    },
    "name": {"type": ["string", "null"], "description": "The tool name, for tool messages."},
    "tool_call_id": {"type": ["string", "null"]},
    "artifact": {
        "type": ["object", "null"],
        "description": "Kept except the reserved evidence keys, which an untrusted import loses.",
    },
    "status": {"enum": ["success", "error", None]},
}

_PLAIN: dict[str, Any] = {
    "title": "PlainMessage",
    "type": "object",
    "description": 'A plain message: {"type": "human", "content": ...}.',
    "properties": {"type": {"enum": TYPE_NAMES}, **_FIELDS},
    "required": ["type"],
}

_WRAPPED: dict[str, Any] = {
    "title": "WrappedMessage",
    "type": "object",
    "description": 'The messages_to_dict wrapper: {"type": "human", "data": {"content": ...}}.',
    "properties": {
        "type": {"enum": TYPE_NAMES},
        "data": {"type": "object", "properties": _FIELDS},
    },
    "required": ["type", "data"],
}

_CONSTRUCTOR: dict[str, Any] = {
    "title": "ConstructorMessage",
    "type": "object",
    "description": (
        'The lc constructor form: {"lc": 1, "type": "constructor", "id": [..., "ToolMessage"], '
        '"kwargs": {"content": ...}}; the last item of id is the message class.'
    ),
    "properties": {
        "lc": {"const": 1},
        "type": {"const": "constructor"},
        "id": {"type": "array", "minItems": 1, "items": {"type": "string"}},
        "kwargs": {"type": "object", "properties": _FIELDS},
    },
    "required": ["lc", "type", "id"],
}

#: One message in any accepted shape. Each branch describes only what that shape reads,
#: so a key another shape ignores never makes a message the reader accepts look invalid.
IMPORT_MESSAGE_SCHEMA: dict[str, Any] = {
    "title": "ImportMessage",
    "description": (
        "One LangChain / LangGraph message: a plain message, the messages_to_dict wrapper, or the "
        "lc constructor form. Other keys are ignored; the original id is not kept."
    ),
    "anyOf": [_PLAIN, _WRAPPED, _CONSTRUCTOR],
}
