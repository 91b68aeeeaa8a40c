"""The OpenAPI description of one imported message, in each shape the import reads.

The schema documents; it does not validate. ``thread_import`` reads every message
itself (``knowledgeweb.threads.interchange.shapes``), so that an error names the message by its
position ("message 57: ...") and so the shapes it accepts can grow without a schema
change refusing them first. The description is therefore never stricter than the
reader: LangChain shapes require ``type``, OpenAI and Anthropic shapes ``role``, and unknown
keys are allowed (LangChain's ``additional_kwargs``, ``response_metadata``... are ignored).
"""

from __future__ import annotations

from typing import Annotated, Any

from ninja import Field
from pydantic import AfterValidator, ConfigDict, WithJsonSchema

from knowledgeweb.api.schemas.text import NO_NUL_PATTERN, StorableInput, Text, storable
from knowledgeweb.threads.interchange.shapes import IMPORT_BODIES_DOC, IMPORT_MESSAGES_DOC

#: Every string the import stores holds no NUL (nor an unpaired surrogate: refused, 422).
_STRING: dict[str, Any] = {"type": "string", "pattern": NO_NUL_PATTERN}
_STRING_OR_NULL: dict[str, Any] = {"type": ["string", "null"], "pattern": NO_NUL_PATTERN}
#: Keys of an object the import reads hold no NUL either.
KEYS: dict[str, Any] = {"pattern": NO_NUL_PATTERN}

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

_PART: dict[str, Any] = {
    "type": "object",
    "description": (
        "A content part. Text parts are joined into the message's text; tool_use / tool_call parts "
        "become the AI message's tool calls; tool_result parts become tool messages; thinking, "
        "image and file parts are kept beside the text (images are never fetched)."
    ),
    "propertyNames": KEYS,
    "properties": {"type": _STRING},
    "required": ["type"],
}

# No type: a message that cannot carry calls (a user's) has its tool_calls ignored whatever
# they hold, and the schema is never stricter than the reader.
_TOOL_CALLS: dict[str, Any] = {
    "description": "The calls an AI message made: a list of LangChain {id, name, args} or OpenAI "
    "{id, type: function, function: {name, arguments}} (arguments as a JSON string).",
}

_FIELDS: dict[str, Any] = {
    "content": {
        "description": "A string, a list of content parts (or strings), or null (an AI message "
        "that only calls tools).",
        "anyOf": [
            _STRING,
            {"type": "array", "items": {"anyOf": [_STRING, _PART]}},
            {"type": "null"},
            {
                "type": "object",
                "propertyNames": KEYS,
                "description": "A tool message only: an MCP CallToolResult (its text blocks are the "
                "content; a knowledgeweb result in its structuredContent is imported as that result).",
            },
        ],
    },
    "name": {**_STRING_OR_NULL, "description": "The tool name, for tool messages."},
    "tool_call_id": _STRING_OR_NULL,
    "artifact": {
        "description": "Any JSON, kept as written; an object loses the reserved evidence keys in an "
        "untrusted import, and anything else carries no evidence.",
    },
    "tool_calls": _TOOL_CALLS,
    "status": {"enum": ["success", "error", None]},
}

_PLAIN: dict[str, Any] = {
    "title": "PlainMessage",
    "propertyNames": KEYS,
    "type": "object",
    "description": 'A plain message: {"type": "human", "content": ...}.',
    "properties": {"type": {"enum": TYPE_NAMES}, **_FIELDS},
    "required": ["type"],
}

_WRAPPED: dict[str, Any] = {
    "title": "WrappedMessage",
    "propertyNames": KEYS,
    "type": "object",
    "description": 'The messages_to_dict wrapper: {"type": "human", "data": {"content": ...}}.',
    "properties": {
        "type": {"enum": TYPE_NAMES},
        "data": {"type": "object", "propertyNames": KEYS, "properties": _FIELDS},
    },
    "required": ["type", "data"],
}

_CONSTRUCTOR: dict[str, Any] = {
    "title": "ConstructorMessage",
    "propertyNames": KEYS,
    "type": "object",
    "description": (
        'The lc constructor form: {"lc": 1, "type": "constructor", "id": [..., "ToolMessage"], '
        '"kwargs": {"content": ...}}; the last item of id is the message class.'
    ),
    "properties": {
        "lc": {"const": 1},
        "type": {"const": "constructor"},
        "id": {"type": "array", "minItems": 1, "items": _STRING},
        "kwargs": {"type": "object", "propertyNames": KEYS, "properties": _FIELDS},
    },
    "required": ["lc", "type", "id"],
}

_ROLE: dict[str, Any] = {
    "title": "RoleMessage",
    "propertyNames": KEYS,
    "type": "object",
    "description": (
        'An OpenAI or Anthropic chat message: {"role": "user" | "assistant" | "system" | "tool", '
        "\"content\": ...}, with an assistant's tool_calls and a tool message's tool_call_id."
    ),
    "properties": {
        "role": {"enum": ["user", "assistant", "system", "developer", "tool"]},
        "content": {
            "description": "A string, a list of content parts, or null (an assistant message that "
            "only calls tools).",
            "anyOf": _FIELDS["content"]["anyOf"],
        },
        "tool_calls": _TOOL_CALLS,
        "tool_call_id": _STRING_OR_NULL,
        "name": _STRING_OR_NULL,
    },
    "required": ["role"],
}

_RESPONSES_ITEM: dict[str, Any] = {
    "title": "ResponsesItem",
    "propertyNames": KEYS,
    "type": "object",
    "description": (
        "An OpenAI Responses item: function_call {call_id, name, arguments}, function_call_output "
        "{call_id, output} or reasoning {summary, content, encrypted_content} (a message item is a "
        "RoleMessage). The items of one model turn become one AI message; reasoning is kept as a part."
    ),
    # Only the type: each kind reads keys the others ignore, and a schema naming them for
    # every kind would be stricter than the reader.
    "properties": {"type": {"enum": ["function_call", "function_call_output", "reasoning"]}},
    "required": ["type"],
}

#: One message in any accepted shape. Each branch describes only what that shape reads,
#: so a key another shape ignores never makes a message the reader accepts look invalid.
IMPORT_MESSAGE_SCHEMA: dict[str, Any] = {
    "title": "ImportMessage",
    "description": (
        "One message: a LangChain / LangGraph plain message, the messages_to_dict wrapper, the "
        "lc constructor form, an OpenAI / Anthropic role message, or an OpenAI Responses item. "
        "Other keys are ignored; the original id is not kept."
    ),
    "anyOf": [_PLAIN, _WRAPPED, _CONSTRUCTOR, _ROLE, _RESPONSES_ITEM],
}


class ImportIn(StorableInput):
    """The object form of an import body. Other keys (an OpenAI or Anthropic request's ``model``,
    its ``system`` prompt...) are allowed; see the operation for every accepted shape."""

    model_config = ConfigDict(extra="allow")

    title: (
        Annotated[
            str,
            Field(min_length=1, max_length=200),
            AfterValidator(storable),
            Field(json_schema_extra={"pattern": NO_NUL_PATTERN}),
        ]
        | None
    ) = Field(default=None, description="Default: the first human message's text.")
    agent_name: Text = Field(default="", max_length=100)
    # Described for OpenAPI, read by thread_import (see knowledgeweb.api.schemas.imports).
    messages: list[Annotated[Any, WithJsonSchema(IMPORT_MESSAGE_SCHEMA)]] = Field(
        description=IMPORT_MESSAGES_DOC
    )


def import_body_schema() -> dict[str, Any]:
    # Its definitions (JsonValue) are the document's components, where MessageIn puts them too.
    thread = ImportIn.model_json_schema(ref_template="#/components/schemas/{model}")
    thread.pop("$defs", None)
    thread["title"] = "Messages with a title"
    any_object = {"type": "object", "propertyNames": KEYS, "additionalProperties": True}
    return {
        "description": IMPORT_BODIES_DOC,
        "anyOf": [
            thread,
            {
                "title": "A bare list of messages, a LangGraph /history list or a list of state values",
                "type": "array",
                "items": any_object,
            },
            {
                "title": "A LangGraph Platform thread state",
                "type": "object",
                "propertyNames": KEYS,
                "properties": {"values": any_object},
                "required": ["values"],
            },
            {
                "title": "An OpenAI Responses request",
                "type": "object",
                "propertyNames": KEYS,
                "properties": {"input": {"type": "array", "items": any_object}},
                "required": ["input"],
            },
            {
                "title": "A LangServe response",
                "type": "object",
                "propertyNames": KEYS,
                "required": ["output"],
            },
        ],
    }
