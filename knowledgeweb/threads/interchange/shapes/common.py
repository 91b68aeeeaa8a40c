"""What every shape reader shares: the fields one message becomes, and how errors name what was found."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from knowledgeweb.threads.errors import MessageInvalidError


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
    #: ``tool_result``, Responses ``function_call_output``): the import names it after the call.
    named_by_call: bool = field(default=False, compare=False)
    #: One OpenAI Responses item of a model's turn (``reasoning``, ``function_call``): the import
    #: joins the items of one turn into the one AI message they are (``shapes.responses``).
    turn_item: bool = field(default=False, compare=False)


def json_kind(value: Any) -> str:
    """What a JSON value is, for an error message ("a list", "an object", ...)."""
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


def keys_of(value: Any) -> str:
    """ " with keys 'a', 'b'" for an object (at most eight named), else nothing."""
    if not isinstance(value, Mapping):
        return ""
    if not value:
        return " with no keys"
    keys = [repr(str(k)[:40]) for k in list(value)[:8]]
    more = f" and {len(value) - 8} more" if len(value) > 8 else ""
    return f" with keys {', '.join(keys)}{more}"


def optional_str(data: Mapping[str, Any], key: str) -> str:
    """``data[key]`` as a string; "" when absent or null; ``MessageInvalidError`` for anything else."""
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise MessageInvalidError(f"'{key}' must be a string, not {json_kind(value)}.")
    return value


def read_status(value: Any) -> str:
    """A message's status: ``success`` or ``error``."""
    if value not in ("success", "error"):
        raise MessageInvalidError(f"'status' must be 'success' or 'error', not {value!r}.")
    return str(value)
