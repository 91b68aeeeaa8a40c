"""Tool calls in every form a framework writes them: beside the content or inside it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from knowledgeweb.threads.errors import MessageInvalidError
from knowledgeweb.threads.interchange.shapes.common import json_kind


def message_tool_calls(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The calls a message lists beside its content: LangChain's ``tool_calls`` (or, for older
    messages, the OpenAI calls in ``additional_kwargs``), its ``invalid_tool_calls``, and an OpenAI
    assistant's ``tool_calls`` or ``function_call``."""
    listed = data.get("tool_calls")
    extra = data.get("additional_kwargs")
    extra = extra if isinstance(extra, Mapping) else {}
    if not listed:
        listed = extra.get("tool_calls") or []
    if not isinstance(listed, list):
        raise MessageInvalidError(f"'tool_calls' must be a list, not {json_kind(listed)}.")
    calls: list[dict[str, Any]] = []
    for index, call in enumerate(listed, start=1):
        try:
            calls.append(_listed_tool_call(call))
        except MessageInvalidError as exc:
            raise MessageInvalidError(f"tool call {index}: {exc}") from exc
    invalid = data.get("invalid_tool_calls") or []
    if not isinstance(invalid, list):
        raise MessageInvalidError(f"'invalid_tool_calls' must be a list, not {json_kind(invalid)}.")
    for index, call in enumerate(invalid, start=1):
        if not isinstance(call, Mapping):
            raise MessageInvalidError(f"invalid tool call {index} must be an object.")
        try:
            # LangChain keeps the arguments it could not parse as the string the model wrote.
            calls.append(tool_call(call.get("id"), call.get("name"), call.get("args")))
        except MessageInvalidError as exc:
            raise MessageInvalidError(f"invalid tool call {index}: {exc}") from exc
    function_call = data.get("function_call", extra.get("function_call"))
    if isinstance(function_call, Mapping) and not calls:
        calls.append(openai_call(None, function_call))
    return calls


def _listed_tool_call(call: Any) -> dict[str, Any]:
    if not isinstance(call, Mapping):
        raise MessageInvalidError(f"a tool call must be an object, not {json_kind(call)}.")
    function = call.get("function")
    if isinstance(function, Mapping):
        return openai_call(call.get("id"), function)
    if "args" not in call and "input" in call:
        return content_tool_call(call)
    return tool_call(call.get("id"), call.get("name"), call.get("args", {}))


def content_tool_call(part: Mapping[str, Any]) -> dict[str, Any]:
    """A ``tool_use`` / ``tool_call`` content part as a stored call."""
    args = part.get("input", part.get("args", {}))
    return tool_call(part.get("id"), part.get("name"), args)


def openai_call(call_id: Any, function: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI call (``{"name", "arguments": "<JSON text>"}``) as a stored call."""
    arguments = function.get("arguments")
    args: Any = arguments
    if isinstance(arguments, str):
        try:
            args = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):
            args = arguments  # kept as the model wrote it: a reviewer needs to see the bad call
    return tool_call(call_id, function.get("name"), args)


def tool_call(call_id: Any, name: Any, args: Any) -> dict[str, Any]:
    """The stored form of one call: ``{"id", "name", "args"}``."""
    if call_id is not None and not isinstance(call_id, str):
        raise MessageInvalidError(f"'id' must be a string, not {json_kind(call_id)}.")
    if name is not None and not isinstance(name, str):
        raise MessageInvalidError(f"'name' must be a string, not {json_kind(name)}.")
    return {"id": call_id or "", "name": name or "", "args": {} if args is None else args}
