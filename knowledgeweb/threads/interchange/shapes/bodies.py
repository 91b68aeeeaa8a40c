"""A whole import body (``read_import_body``): where its messages are, and its title and agent name.

A body is one of:

- ``{"title"?, "agent_name"?, "messages": [...]}``: this project's import body and JSON export,
  a LangGraph state's values or a ``runs/wait`` result, an OpenAI chat request, or an
  Anthropic Messages request (its top-level ``system`` becomes the first message);
- an OpenAI Responses request, ``{"input": [...], "instructions"?}``;
- a bare list of messages;
- a LangGraph Platform thread state, ``{"values": {"messages": [...]}, ...}``;
- a LangGraph Platform ``/history`` list of thread states: the latest state is imported;
- a list of LangGraph state values (``[s.values for s in graph.get_state_history(...)]``): the
  first, which is the newest in LangGraph's order, is imported (docs/decisions/0181-a-list-of-state-values-imports-its-first.md);
- a LangServe response, ``{"output": ..., "metadata": ...}``, whose output is a list of
  messages, ``{"messages": [...]}`` or one message (an OpenAI Responses response too).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from knowledgeweb.threads.errors import ThreadInvalidError
from knowledgeweb.threads.interchange.shapes.common import json_kind, keys_of
from knowledgeweb.threads.interchange.shapes.docs import ACCEPTED_BODIES
from knowledgeweb.threads.interchange.shapes.messages import TYPE_NAMES


@dataclass(frozen=True, slots=True)
class ImportBody:
    """What an import body holds: its messages (unread) and the title and agent name it names."""

    messages: list[Any]
    shape: str
    title: str | None = None
    agent_name: str | None = None


def read_import_body(body: Any) -> ImportBody:
    """Find the messages in any accepted body shape, or ``ThreadInvalidError`` naming what was found."""
    if isinstance(body, list):
        if body and all(_is_state(item) for item in body):
            return _from_state(_latest_state(body), "a LangGraph /history list")
        # The oldest values of a history may be empty (``{}``: before the input was written).
        if any(_is_values(item) for item in body) and all(_is_values(item) or item == {} for item in body):
            # get_state_history lists the newest state first.
            newest = body[0].get("messages", [])
            return ImportBody(messages=newest, shape="a list of LangGraph state values")
        return ImportBody(messages=body, shape="a list of messages")
    if not isinstance(body, Mapping):
        raise _unrecognised(f"{json_kind(body)}")
    title, agent_name = _optional_text(body, "title"), _optional_text(body, "agent_name")
    if "messages" in body:
        messages = body["messages"]
        if not isinstance(messages, list):
            raise ThreadInvalidError(f"'messages' must be a list of messages, not {json_kind(messages)}.")
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
    if "input" in body and isinstance(body["input"], list):
        messages = body["input"]
        instructions = body.get("instructions")
        if isinstance(instructions, str) and instructions:
            # A Responses request keeps its system prompt beside the items.
            messages = [{"role": "system", "content": instructions}, *messages]
        return ImportBody(
            messages=messages, shape="an OpenAI Responses request", title=title, agent_name=agent_name
        )
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
                f"the LangServe 'output' is {json_kind(output)}{keys_of(output)}; a thread needs it to be "
                "a list of messages, an object with 'messages', or one message."
            )
        return ImportBody(messages=messages, shape="a LangServe response", title=title, agent_name=agent_name)
    raise _unrecognised(f"an object{keys_of(body)}")


def _is_state(item: Any) -> bool:
    return isinstance(item, Mapping) and "values" in item and "type" not in item and "role" not in item


def _is_values(item: Any) -> bool:
    """A LangGraph state's values: a ``messages`` list and no key a message has."""
    return (
        isinstance(item, Mapping)
        and isinstance(item.get("messages"), list)
        and not {"type", "role", "lc", "content"} & set(item)
    )


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
    found = f"{json_kind(values)}{keys_of(values)}"
    raise ThreadInvalidError(f"the 'values' of {shape} is {found}; a thread needs a 'messages' list in it.")


def _unrecognised(found: str) -> ThreadInvalidError:
    return ThreadInvalidError(f"the body is {found}, which is not a thread. Accepted: {ACCEPTED_BODIES}.")


def _looks_like_message(value: Mapping[str, Any]) -> bool:
    return "role" in value or value.get("type") in TYPE_NAMES or value.get("lc") == 1


def _optional_text(body: Mapping[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is None or value == "":
        return None if value is None else ""
    if not isinstance(value, str):
        raise ThreadInvalidError(f"'{key}' must be a string, not {json_kind(value)}.")
    return value
