"""Reading agent frameworks' thread JSON into plain message fields (docs/architecture.md#http-api, docs/decisions/0023-imports-tool-calls-and-parts.md).

A whole import body (``read_import_body``) is one of:

- ``{"title"?, "agent_name"?, "messages": [...]}``: this project's import body and JSON export,
  a LangGraph state's values or a ``runs/wait`` result, an OpenAI chat request, or an
  Anthropic Messages request (its top-level ``system`` becomes the first message);
- a bare list of messages;
- a LangGraph Platform thread state, ``{"values": {"messages": [...]}, ...}``;
- a LangGraph Platform ``/history`` list of thread states: the latest state is imported;
- a LangServe response, ``{"output": ..., "metadata": ...}``, whose output is a list of
  messages, ``{"messages": [...]}`` or one message.

One message (``read_message``) is one of:

- a LangChain dict: ``{"type", "content", "name", "tool_call_id", "artifact", "id", "status",
  "tool_calls", "invalid_tool_calls", "additional_kwargs", ...}`` (``model_dump``, LangServe,
  LangGraph Platform), with this project's own ``tool_calls`` and ``parts`` in their stored form;
- the ``{"type": ..., "data": {...}}`` wrapper of ``messages_to_dict``;
- the ``{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs": {...}}`` form of ``dumpd``;
- an OpenAI or Anthropic ``role`` dict: ``{"role": "user" | "assistant" | "system" |
  "developer" | "tool" | "function", "content", "tool_calls", "tool_call_id", "name", ...}``.

``content`` is a string or a list of parts. Text parts are joined, without a
separator as LangChain does, into the message's text; ``tool_use`` / ``tool_call``
parts become the AI message's tool calls; each ``tool_result`` part becomes a tool
message of its own, written before the rest of the message; thinking, refusal,
image, audio and file parts become the message's ``parts`` (see
``knowledgeweb.threads.parts``), with image and file data dropped. The original
``id`` is not kept, since the store assigns its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from knowledgeweb.threads.errors import MessageInvalidError, ThreadInvalidError
from knowledgeweb.threads.parts import MAX_KIND_CHARS, MAX_MEDIA_TYPE_CHARS, MAX_URL_CHARS

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

ACCEPTED_BODIES = (
    '{"title", "agent_name", "messages": [...]} (this API\'s body and JSON export, LangGraph state '
    "values, OpenAI and Anthropic requests); a bare list of messages; a LangGraph Platform thread state "
    '{"values": {"messages": [...]}}; a LangGraph Platform /history list of thread states; '
    'a LangServe response {"output": ...}'
)
ACCEPTED_MESSAGES = (
    "a LangChain message dict with 'type', its {'type', 'data'} wrapper, its "
    "{'lc': 1, 'type': 'constructor'} form, or an OpenAI / Anthropic dict with 'role'"
)

#: For the API's documentation of the import body (OpenAPI) and of its messages.
IMPORT_BODIES_DOC = """One of:

- `{"title"?, "agent_name"?, "messages": [...]}`: this API's own body and JSON export, a LangGraph
  state's values or Platform `runs/wait` result, an OpenAI chat request, or an Anthropic Messages
  request (its `system` becomes the first message);
- a bare list of messages;
- a LangGraph Platform thread state `{"values": {"messages": [...]}, ...}` (`GET /threads/{id}/state`);
- a LangGraph Platform `/history` list of thread states: the latest state is imported;
- a LangServe response `{"output": ..., "metadata": ...}` whose output is a list of messages,
  `{"messages": [...]}` or one message.

Without a `title` the thread is titled by its first human message. Anything else answers 422
naming what was found."""

IMPORT_MESSAGES_DOC = """Each message is one of: a LangChain dict with `type` (`human`, `ai`, `tool`,
`system` or the class names `HumanMessage`...; `model_dump()` and LangServe output), the
`{"type", "data"}` wrapper of `messages_to_dict`, the `{"lc": 1, "type": "constructor", "id": [...],
"kwargs": {...}}` form of `dumpd`, or an OpenAI / Anthropic dict with `role` (`user`, `assistant`,
`system`, `developer`, `tool` with `tool_call_id`). `content` is a string or a list of parts: text
parts are joined into the text; `tool_use` / `tool_call` parts, LangChain's `tool_calls` and
`invalid_tool_calls` and OpenAI's `tool_calls` (JSON-string `arguments`) become the AI message's
tool calls; each `tool_result` part becomes a tool message; thinking, reasoning, refusal, image,
audio and file parts are kept in the message's `parts` (image and file data are dropped, only
their media type is kept). `artifact` may be any JSON; reserved evidence keys are stripped from an
object artifact."""

_TEXT_PARTS = frozenset({"text", "input_text", "output_text"})
_TOOL_CALL_PARTS = frozenset({"tool_use", "tool_call"})
_THINKING_PARTS = frozenset({"thinking", "reasoning"})
_FILE_PARTS = {
    "input_audio": "audio",
    "audio": "audio",
    "file": "file",
    "document": "document",
    "video": "video",
}
_DATA_URL = re.compile(r"data:([\w.+-]+/[\w.+-]+)[;,]")


@dataclass(frozen=True, slots=True)
class MessageFields:
    """One message as the store takes it, before any write."""

    type: str
    content: str
    name: str = ""
    tool_call_id: str = ""
    artifact: Any = None
    status: str = "success"
    tool_calls: tuple[dict[str, Any], ...] = ()
    parts: tuple[dict[str, Any], ...] = ()
    #: A tool result whose format names only the call's id (OpenAI ``role: tool``, Anthropic
    #: ``tool_result``): the import names it after the call it answers.
    named_by_call: bool = field(default=False, compare=False)


@dataclass(frozen=True, slots=True)
class ImportBody:
    """What an import body holds: its messages (unread) and the title and agent name it names."""

    messages: list[Any]
    shape: str
    title: str | None = None
    agent_name: str | None = None


# --- Bodies -----------------------------------------------------------------------------------------


def read_import_body(body: Any) -> ImportBody:
    """Find the messages in any accepted body shape, or ``ThreadInvalidError`` naming what was found."""
    if isinstance(body, list):
        if body and all(_is_state(item) for item in body):
            return _from_state(_latest_state(body), "a LangGraph /history list")
        return ImportBody(messages=body, shape="a list of messages")
    if not isinstance(body, Mapping):
        raise _unrecognised(f"{_json_kind(body)}")
    title, agent_name = _optional_text(body, "title"), _optional_text(body, "agent_name")
    if "messages" in body:
        messages = body["messages"]
        if not isinstance(messages, list):
            raise ThreadInvalidError(f"'messages' must be a list of messages, not {_json_kind(messages)}.")
        system = body.get("system")
        if system is not None:
            # An Anthropic Messages request keeps its system prompt beside the messages.
            messages = [{"role": "system", "content": system}, *messages]
        return ImportBody(
            messages=messages, shape="an object with 'messages'", title=title, agent_name=agent_name
        )
    if "values" in body:
        state = _from_state(body, "a LangGraph thread state")
        return ImportBody(state.messages, state.shape, title=title, agent_name=agent_name)
    if "output" in body:
        output = body["output"]
        if isinstance(output, list):
            messages = output
        elif isinstance(output, Mapping) and isinstance(output.get("messages"), list):
            messages = output["messages"]
        elif isinstance(output, Mapping) and _looks_like_message(output):
            messages = [output]
        else:
            raise ThreadInvalidError(
                f"the LangServe 'output' is {_json_kind(output)}{_keys_of(output)}; a thread needs it to be "
                "a list of messages, an object with 'messages', or one message."
            )
        return ImportBody(messages=messages, shape="a LangServe response", title=title, agent_name=agent_name)
    raise _unrecognised(f"an object{_keys_of(body)}")


def _is_state(item: Any) -> bool:
    return isinstance(item, Mapping) and "values" in item and "type" not in item and "role" not in item


def _latest_state(states: list[Any]) -> Mapping[str, Any]:
    """The newest state of a /history list: the latest ``created_at``, else the first (the API's order)."""
    stamped = [s for s in states if isinstance(s.get("created_at"), str)]
    if len(stamped) == len(states):
        return max(states, key=lambda s: s["created_at"])
    return states[0]


def _from_state(state: Mapping[str, Any], shape: str) -> ImportBody:
    values = state["values"]
    if isinstance(values, list):
        return ImportBody(messages=values, shape=shape)
    if isinstance(values, Mapping) and isinstance(values.get("messages"), list):
        return ImportBody(messages=values["messages"], shape=shape)
    found = f"{_json_kind(values)}{_keys_of(values)}"
    raise ThreadInvalidError(f"the 'values' of {shape} is {found}; a thread needs a 'messages' list in it.")


def _unrecognised(found: str) -> ThreadInvalidError:
    return ThreadInvalidError(f"the body is {found}, which is not a thread. Accepted: {ACCEPTED_BODIES}.")


def _keys_of(value: Any) -> str:
    if not isinstance(value, Mapping):
        return ""
    if not value:
        return " with no keys"
    keys = [repr(str(k)[:40]) for k in list(value)[:8]]
    more = f" and {len(value) - 8} more" if len(value) > 8 else ""
    return f" with keys {', '.join(keys)}{more}"


def _looks_like_message(value: Mapping[str, Any]) -> bool:
    return "role" in value or value.get("type") in TYPE_NAMES or value.get("lc") == 1


def _optional_text(body: Mapping[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is None or value == "":
        return None if value is None else ""
    if not isinstance(value, str):
        raise ThreadInvalidError(f"'{key}' must be a string, not {_json_kind(value)}.")
    return value


# --- Messages ---------------------------------------------------------------------------------------


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
        raise MessageInvalidError(f"a message must be a JSON object, not {_json_kind(raw)}.")
    if raw.get("lc") == 1 and raw.get("type") == "constructor":
        ident = raw.get("id")
        if not isinstance(ident, list) or not ident or not isinstance(ident[-1], str):
            raise MessageInvalidError("an 'lc' constructor needs 'id' as a list ending in the class name.")
        kwargs = raw.get("kwargs", {})
        if not isinstance(kwargs, Mapping):
            raise MessageInvalidError("an 'lc' constructor needs 'kwargs' as a JSON object.")
        return _read(_type_name(ident[-1]), kwargs)
    if "data" in raw and isinstance(raw.get("data"), Mapping) and "content" not in raw:
        return _read(_type_name(raw.get("type")), raw["data"])
    if "type" in raw and raw["type"] != "message":
        return _read(_type_name(raw["type"]), raw)
    if "role" in raw:
        return _read(_role_name(raw["role"]), raw)
    raise MessageInvalidError(
        f"'type' is required (human, ai, tool or system), or 'role' (user, assistant, system, "
        f"developer or tool); found an object{_keys_of(raw)}. A message is {ACCEPTED_MESSAGES}."
    )


def _type_name(value: Any) -> str:
    if value is None:
        raise MessageInvalidError("'type' is required (human, ai, tool or system).")
    if not isinstance(value, str) or value not in TYPE_NAMES:
        raise MessageInvalidError(f"unknown message type {value!r}; expected human, ai, tool or system.")
    return TYPE_NAMES[value]


def _role_name(value: Any) -> str:
    if not isinstance(value, str) or value not in ROLE_NAMES:
        raise MessageInvalidError(
            f"unknown message role {value!r}; expected user, assistant, system, developer or tool."
        )
    return ROLE_NAMES[value]


def _read(type_: str, data: Mapping[str, Any]) -> list[MessageFields]:
    calls = _message_tool_calls(data)
    raw_content = data.get("content")
    if raw_content is None and not (type_ == "ai" and (calls or "tool_calls" in data or "refusal" in data)):
        raise MessageInvalidError("'content' is required (a string or a list of content parts).")
    content = _read_content(raw_content)
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
            raise MessageInvalidError(f"'parts' must be a list, not {_json_kind(data['parts'])}.")
        parts = [*data["parts"], *parts]
    status = data.get("status")
    name = _optional_str(data, "name")
    if not name and type_ == "tool" and data.get("role") == "function":
        raise MessageInvalidError("a 'function' message needs its 'name'.")
    message = MessageFields(
        type=type_,
        content=content.text,
        name=name,
        tool_call_id=_optional_str(data, "tool_call_id"),
        artifact=data.get("artifact"),
        status="success" if status is None else _status(status),
        tool_calls=tuple(calls),
        parts=tuple(parts),
        named_by_call=type_ == "tool" and "role" in data and not name,
    )
    if content.results and not (message.content or message.parts or message.tool_calls):
        return list(content.results)
    return [*content.results, message]


@dataclass(slots=True)
class _Content:
    text: str = ""
    parts: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    results: list[MessageFields] = field(default_factory=list)


def content_text(value: Any) -> str:
    """A message's content as text: a string, or the text parts of a list joined in order.

    Appending through the API accepts text only; any other part is refused by name.
    """
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise MessageInvalidError(
            f"'content' must be a string or a list of text parts, not {_json_kind(value)}."
        )
    for index, part in enumerate(value, start=1):
        if isinstance(part, Mapping) and part.get("type") != "text":
            raise MessageInvalidError(
                f"content part {index} is {part.get('type')!r}; only text parts are accepted."
            )
    return _read_content(value).text


def _read_content(value: Any) -> _Content:
    read = _Content()
    if value is None:
        return read
    if isinstance(value, str):
        read.text = value
        return read
    if not isinstance(value, list):
        raise MessageInvalidError(
            f"'content' must be a string or a list of content parts, not {_json_kind(value)}."
        )
    texts: list[str] = []
    for index, part in enumerate(value, start=1):
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, Mapping):
            raise MessageInvalidError(
                f"content part {index} is {_json_kind(part)}; a part is a string or an object."
            )
        kind = part.get("type")
        if kind == "non_standard" and isinstance(part.get("value"), Mapping) and "type" in part["value"]:
            # LangChain's v1 wrapper around a provider's own block: read the block itself.
            part = part["value"]
            kind = part.get("type")
        if not isinstance(kind, str):
            raise MessageInvalidError(f"content part {index} has no 'type' naming what it is.")
        try:
            if kind in _TEXT_PARTS:
                texts.append(_text_of(part))
            elif kind in _TOOL_CALL_PARTS:
                read.calls.append(_content_tool_call(part))
            elif kind == "tool_result":
                read.results.append(_tool_result(part))
            else:
                read.parts.append(_part(kind, part))
        except MessageInvalidError as exc:
            raise MessageInvalidError(f"content part {index} ({kind!r}): {exc}") from exc
    read.text = "".join(texts)
    return read


def _text_of(part: Mapping[str, Any]) -> str:
    text = part.get("text")
    if not isinstance(text, str):
        raise MessageInvalidError("a text part needs a string 'text'.")
    return text


def _part(kind: str, part: Mapping[str, Any]) -> dict[str, Any]:
    if kind in _THINKING_PARTS:
        return {"type": "thinking", "text": _thinking_text(part)}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking"}
    if kind == "refusal":
        refusal = part.get("refusal", part.get("text"))
        if not isinstance(refusal, str):
            raise MessageInvalidError("a refusal part needs a string 'refusal'.")
        return {"type": "refusal", "text": refusal}
    if kind in ("image", "image_url"):
        media_type, url = _media_reference(part)
        return {"type": "image", "media_type": media_type, "url": url}
    if kind in _FILE_PARTS:
        media_type, _ = _media_reference(part)
        if not media_type and kind == "input_audio":
            audio = part.get("input_audio")
            fmt = audio.get("format") if isinstance(audio, Mapping) else None
            media_type = f"audio/{fmt}" if isinstance(fmt, str) and fmt.isalnum() else ""
        return {"type": "file", "kind": _FILE_PARTS[kind], "media_type": media_type}
    return {"type": "other", "kind": kind[:MAX_KIND_CHARS]}


def _thinking_text(part: Mapping[str, Any]) -> str:
    for key in ("thinking", "reasoning"):
        if isinstance(part.get(key), str):
            return str(part[key])
    summary = part.get("summary")
    if isinstance(summary, list):
        # OpenAI's reasoning items: a list of {"type": "summary_text", "text": ...}.
        return "\n\n".join(
            s["text"] for s in summary if isinstance(s, Mapping) and isinstance(s.get("text"), str)
        )
    raise MessageInvalidError("a thinking part needs its text in 'thinking' or 'reasoning'.")


def _media_reference(part: Mapping[str, Any]) -> tuple[str, str]:
    """(media type, http(s) url) of an image or file part in any of the formats; data is dropped."""
    source = part.get("source")
    nested = part.get("image_url", part.get("file"))
    candidates = [
        part,
        source if isinstance(source, Mapping) else {},
        nested if isinstance(nested, Mapping) else {},
    ]
    media_type = ""
    url = ""
    for candidate in candidates:
        for key in ("media_type", "mime_type"):
            if not media_type and isinstance(candidate.get(key), str):
                media_type = candidate[key]
        if not url and isinstance(candidate.get("url"), str):
            url = candidate["url"]
    if isinstance(nested, str) and not url:
        url = nested  # OpenAI's older {"image_url": "<url>"}
    if isinstance(source, str) and not url:
        url = source
    if url.startswith("data:"):
        found = _DATA_URL.match(url)
        if found is not None and not media_type:
            media_type = found.group(1)
        url = ""
    if not url.lower().startswith(("https://", "http://")) or len(url) > MAX_URL_CHARS:
        url = ""
    return media_type[:MAX_MEDIA_TYPE_CHARS], url


def _content_tool_call(part: Mapping[str, Any]) -> dict[str, Any]:
    args = part.get("input", part.get("args", {}))
    return _tool_call(part.get("id"), part.get("name"), args)


def _tool_result(part: Mapping[str, Any]) -> MessageFields:
    """An Anthropic ``tool_result`` part as the tool message it is."""
    content = _read_content(part.get("content"))
    if content.calls or content.results:
        raise MessageInvalidError("a tool result may hold only text and media parts.")
    is_error = part.get("is_error", False)
    if not isinstance(is_error, bool):
        raise MessageInvalidError("'is_error' must be true or false.")
    return MessageFields(
        type="tool",
        content=content.text,
        tool_call_id=_optional_str(part, "tool_use_id"),
        status="error" if is_error else "success",
        parts=tuple(content.parts),
        named_by_call=True,
    )


def _message_tool_calls(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The calls a message lists beside its content: LangChain's ``tool_calls`` (or, for older
    messages, the OpenAI calls in ``additional_kwargs``), its ``invalid_tool_calls``, and an OpenAI
    assistant's ``tool_calls`` or ``function_call``."""
    listed = data.get("tool_calls")
    extra = data.get("additional_kwargs")
    extra = extra if isinstance(extra, Mapping) else {}
    if not listed:
        listed = extra.get("tool_calls") or []
    if not isinstance(listed, list):
        raise MessageInvalidError(f"'tool_calls' must be a list, not {_json_kind(listed)}.")
    calls: list[dict[str, Any]] = []
    for index, call in enumerate(listed, start=1):
        try:
            calls.append(_listed_tool_call(call))
        except MessageInvalidError as exc:
            raise MessageInvalidError(f"tool call {index}: {exc}") from exc
    invalid = data.get("invalid_tool_calls") or []
    if not isinstance(invalid, list):
        raise MessageInvalidError(f"'invalid_tool_calls' must be a list, not {_json_kind(invalid)}.")
    for index, call in enumerate(invalid, start=1):
        if not isinstance(call, Mapping):
            raise MessageInvalidError(f"invalid tool call {index} must be an object.")
        try:
            # LangChain keeps the arguments it could not parse as the string the model wrote.
            calls.append(_tool_call(call.get("id"), call.get("name"), call.get("args")))
        except MessageInvalidError as exc:
            raise MessageInvalidError(f"invalid tool call {index}: {exc}") from exc
    function_call = data.get("function_call", extra.get("function_call"))
    if isinstance(function_call, Mapping) and not calls:
        calls.append(_openai_call(None, function_call))
    return calls


def _listed_tool_call(call: Any) -> dict[str, Any]:
    if not isinstance(call, Mapping):
        raise MessageInvalidError(f"a tool call must be an object, not {_json_kind(call)}.")
    function = call.get("function")
    if isinstance(function, Mapping):
        return _openai_call(call.get("id"), function)
    if "args" not in call and "input" in call:
        return _content_tool_call(call)
    return _tool_call(call.get("id"), call.get("name"), call.get("args", {}))


def _openai_call(call_id: Any, function: Mapping[str, Any]) -> dict[str, Any]:
    arguments = function.get("arguments")
    args: Any = arguments
    if isinstance(arguments, str):
        try:
            args = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):
            args = arguments  # kept as the model wrote it: a reviewer needs to see the bad call
    return _tool_call(call_id, function.get("name"), args)


def _tool_call(call_id: Any, name: Any, args: Any) -> dict[str, Any]:
    if call_id is not None and not isinstance(call_id, str):
        raise MessageInvalidError(f"'id' must be a string, not {_json_kind(call_id)}.")
    if name is not None and not isinstance(name, str):
        raise MessageInvalidError(f"'name' must be a string, not {_json_kind(name)}.")
    return {"id": call_id or "", "name": name or "", "args": {} if args is None else args}


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
