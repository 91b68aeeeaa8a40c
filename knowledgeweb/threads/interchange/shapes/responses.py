"""OpenAI Responses API items: ``message``, ``function_call``, ``function_call_output``, ``reasoning``.

The Responses API writes a model's turn as several items (its reasoning, its message, each
call it makes); this project stores a turn as one AI message. ``read_responses_item`` reads
one item; ``join_turns`` then joins the items of one turn: a reasoning item, an assistant
``message`` and the ``function_call`` items that follow one another become one AI message,
its reasoning kept as a ``thinking`` part (or ``redacted_thinking`` when only encrypted
content was kept), its calls as its tool calls. Two assistant messages with text stay two, and a reasoning
item after a message or a call opens the next turn.
``message`` items themselves are read as ``role`` dicts (``shapes.messages``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from knowledgeweb.threads.errors import MessageInvalidError
from knowledgeweb.threads.interchange.shapes.calls import openai_call
from knowledgeweb.threads.interchange.shapes.common import MessageFields, json_kind, optional_str
from knowledgeweb.threads.interchange.shapes.content import read_content

RESPONSES_ITEMS = frozenset({"function_call", "function_call_output", "reasoning"})


def read_responses_item(item: Mapping[str, Any]) -> MessageFields:
    """One ``function_call``, ``function_call_output`` or ``reasoning`` item as message fields."""
    kind = item["type"]
    if kind == "function_call":
        call_id = item.get("call_id", item.get("id"))
        if not isinstance(call_id, str) or not call_id:
            raise MessageInvalidError("a function_call item needs its 'call_id'.")
        return MessageFields(type="ai", content="", tool_calls=(openai_call(call_id, item),), turn_item=True)
    if kind == "function_call_output":
        call_id = optional_str(item, "call_id")
        if not call_id:
            raise MessageInvalidError("a function_call_output item needs its 'call_id'.")
        output = item.get("output")
        if output is None:
            raise MessageInvalidError("a function_call_output item needs its 'output'.")
        content = read_content(output)
        if content.calls or content.results:
            raise MessageInvalidError("a function_call_output may hold only text and media parts.")
        return MessageFields(
            type="tool",
            content=content.text,
            tool_call_id=call_id,
            parts=tuple(content.parts),
            named_by_call=True,
        )
    return MessageFields(type="ai", content="", parts=(_reasoning_part(item),), turn_item=True)


def _reasoning_part(item: Mapping[str, Any]) -> dict[str, Any]:
    """The visible text of a reasoning item: its summary, else its reasoning text; a redacted
    part when the item keeps only ``encrypted_content``."""
    texts: list[str] = []
    for key in ("summary", "content"):
        blocks = item.get(key)
        if blocks is None:
            continue
        if not isinstance(blocks, list):
            raise MessageInvalidError(f"a reasoning item's '{key}' must be a list, not {json_kind(blocks)}.")
        texts = [b["text"] for b in blocks if isinstance(b, Mapping) and isinstance(b.get("text"), str)]
        if texts:
            break
    if not texts:
        return {"type": "redacted_thinking"}
    return {"type": "thinking", "text": "\n\n".join(texts)}


def join_turns(
    read: Sequence[MessageFields], positions: Sequence[int]
) -> tuple[list[MessageFields], list[int]]:
    """Join the Responses items of one model turn into one AI message (see the module docstring);
    ``positions`` (each message's place in the body, for errors) follow, the first item's kept."""
    joined: list[MessageFields] = []
    places: list[int] = []
    for fields, position in zip(read, positions, strict=True):
        previous = joined[-1] if joined else None
        if (
            previous is not None
            and previous.turn_item
            and fields.turn_item
            and (not previous.content or not fields.content)
            and not (_reasoning_only(fields) and (previous.content or previous.tool_calls))
        ):
            joined[-1] = replace(
                previous,
                content=previous.content or fields.content,
                tool_calls=(*previous.tool_calls, *fields.tool_calls),
                parts=(*previous.parts, *fields.parts),
            )
            continue
        joined.append(fields)
        places.append(position)
    return joined, places


def _reasoning_only(fields: MessageFields) -> bool:
    """A reasoning item: it opens the turn it reasons about, so it never joins the one before."""
    return bool(fields.parts) and not fields.content and not fields.tool_calls
