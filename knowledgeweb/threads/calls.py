"""An AI message's tool calls as readers see them: which tool message answered each call,
one plain sentence per call, and the Markdown of calls and parts in an export.

Everything here is plain text; the viewer escapes it and the Markdown export
escapes it or fences it, so a hostile tool name, argument or part stays inert.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any
from uuid import UUID

from knowledgeweb.threads.models import Message, MessageType

#: A value longer than this is cut in the one-line description (the Markdown export
#: and the viewer's details still show every argument in full).
MAX_SHOWN_VALUE = 200

#: For each AI message with calls, the tool message answering each call (None: unanswered).
Answers = dict[UUID, list[Message | None]]


def call_answers(messages: Sequence[Message]) -> Answers:
    """Link each call to the first later tool message whose ``tool_call_id`` is the call's id.

    A tool message answers at most one call; a later call that reuses an id takes
    over from an earlier one still unanswered.
    """
    answers: Answers = {}
    pending: dict[str, tuple[UUID, int]] = {}
    for message in messages:
        if message.type == MessageType.AI and message.tool_calls:
            answers[message.id] = [None] * len(message.tool_calls)
            for index, call in enumerate(message.tool_calls):
                if call["id"]:
                    pending[call["id"]] = (message.id, index)
        elif message.type == MessageType.TOOL and message.tool_call_id in pending:
            owner, index = pending.pop(message.tool_call_id)
            answers[owner][index] = message
    return answers


def describe_call(call: Mapping[str, Any]) -> str:
    """``called knowledge_search with query 'how are citations verified?'``"""
    name = call["name"] or "a tool"
    args = call["args"]
    if isinstance(args, dict):
        if not args:
            return f"called {name} with no arguments"
        # Sorted: PostgreSQL's jsonb does not keep the order keys were written in, and a
        # reader must see the same sentence whichever database holds the thread.
        shown = ", ".join(f"{key} {_value(value)}" for key, value in sorted(args.items()))
        return f"called {name} with {shown}"
    if isinstance(args, str):
        return f"called {name} with arguments that are not JSON: {_cut(args)!r}"
    return f"called {name} with {_value(args)}"


def _value(value: Any) -> str:
    if isinstance(value, str):
        return f"'{_cut(value)}'"
    return _cut(json.dumps(value, ensure_ascii=False))


def _cut(text: str) -> str:
    return text if len(text) <= MAX_SHOWN_VALUE else text[: MAX_SHOWN_VALUE - 1] + "…"


def part_label(part: Mapping[str, Any]) -> str:
    """A part's one-line label: ``Thinking``, ``Image (image/png)``..."""
    kind = part["type"]
    if kind == "thinking":
        return "Thinking"
    if kind == "redacted_thinking":
        return "Thinking (redacted by the provider)"
    if kind == "refusal":
        return "Refusal"
    if kind == "image":
        return f"Image ({part['media_type'] or 'unknown type'}), not shown"
    if kind == "file":
        return f"{part['kind'].capitalize()} ({part['media_type'] or 'unknown type'}), not shown"
    return f"A {part['kind']!r} part, not shown"


def part_text(part: Mapping[str, Any]) -> str:
    """What a collapsed part shows when opened: its text, or what is known of a placeholder."""
    kind = part["type"]
    if kind in ("thinking", "refusal"):
        return str(part["text"])
    if kind == "image":
        note = "Images in imported threads are kept as placeholders and never fetched."
        return f"{note} It was given as {part['url']}" if part["url"] else note
    if kind == "file":
        return "Files in imported threads are kept as placeholders; their data was not kept."
    if kind == "redacted_thinking":
        return "The provider encrypted this reasoning; it was not kept."
    return "This kind of content part is not read by knowledgeweb; only its name was kept."


# --- Markdown -------------------------------------------------------------------------------------

_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]<>()#+!|~:-])")


def calls_markdown(message: Message, answers: Sequence[Message | None]) -> list[str]:
    """The Markdown lines of an AI message's calls: a sentence each, then its arguments in full."""
    lines: list[str] = []
    for index, call in enumerate(message.tool_calls):
        answer = answers[index] if index < len(answers) else None
        where = f"answered in message {answer.seq}" if answer is not None else "no answer in this thread"
        ident = f" (call {_inline(call['id'])})" if call["id"] else ""
        lines += [f"- Tool call: {_inline(describe_call(call))}{ident}, {where}.", ""]
        arguments = json.dumps(call["args"], ensure_ascii=False, indent=2, sort_keys=True)
        lines += [_indent(_fenced(arguments, "json")), ""]
    return lines


def parts_markdown(message: Message) -> list[str]:
    """The Markdown lines of a message's parts: a label each, and the text a part holds."""
    lines: list[str] = []
    for part in message.parts:
        lines += [f"- {_inline(part_label(part))}", ""]
        if part["type"] in ("thinking", "refusal") or (part["type"] == "image" and part["url"]):
            lines += [_indent(_fenced(part_text(part), "text")), ""]
    return lines


def _inline(text: str) -> str:
    """Caller text as inert Markdown on one line (no link, emphasis, HTML or autolink)."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", " ".join(text.split()))


def _fenced(text: str, info: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") else text + "\n"
    return f"{fence}{info}\n{body}{fence}"


def _indent(block: str) -> str:
    return "\n".join(f"  {line}" if line else "" for line in block.split("\n"))
