"""The stored form of a message's tool calls and non-text parts (docs/architecture.md#data-model, docs/decisions/0023-imports-tool-calls-and-parts.md).

A tool call is ``{"id": str, "name": str, "args": <any JSON>}``: ``args`` is
normally an object; a call whose arguments were not valid JSON keeps them as the
string the model wrote. Only AI messages carry tool calls.

A part is one of:

- ``{"type": "thinking", "text": str}``: the model's visible reasoning;
- ``{"type": "redacted_thinking"}``: reasoning the provider encrypted (its data is not kept);
- ``{"type": "refusal", "text": str}``: a refusal the model gave instead of text;
- ``{"type": "image", "media_type": str, "url": str}``: a placeholder; image data is never kept,
  ``url`` only names an ``http(s)`` reference (else ``""``) and is never fetched or linked;
- ``{"type": "file", "kind": str, "media_type": str}``: an audio, document, file or video
  placeholder, likewise without its data;
- ``{"type": "other", "kind": str}``: a content part of a kind this store does not read,
  kept as its name so a reviewer sees that something was there.

Readers show parts collapsed and as plain text, never as Markdown or HTML.
These checks are the write path's: every message, imported or appended, passes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from knowledgeweb.threads.errors import MessageInvalidError

MAX_ID_CHARS = 128
MAX_NAME_CHARS = 128
MAX_KIND_CHARS = 64
MAX_MEDIA_TYPE_CHARS = 128
MAX_URL_CHARS = 2048

#: The keys each part type holds, all strings.
PART_KEYS: dict[str, tuple[str, ...]] = {
    "thinking": ("text",),
    "redacted_thinking": (),
    "refusal": ("text",),
    "image": ("media_type", "url"),
    "file": ("kind", "media_type"),
    "other": ("kind",),
}
_BOUNDS = {"kind": MAX_KIND_CHARS, "media_type": MAX_MEDIA_TYPE_CHARS, "url": MAX_URL_CHARS}
TOOL_CALL_KEYS = ("id", "name", "args")


def checked_tool_calls(value: Any) -> list[dict[str, Any]]:
    """``value`` as stored tool calls, or ``MessageInvalidError`` naming the first problem."""
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise MessageInvalidError("'tool_calls' must be a list.")
    calls: list[dict[str, Any]] = []
    for index, call in enumerate(value, start=1):
        if not isinstance(call, Mapping) or set(call) != set(TOOL_CALL_KEYS):
            raise MessageInvalidError(
                f"tool call {index} must be an object with exactly 'id', 'name', 'args'."
            )
        for key, limit in (("id", MAX_ID_CHARS), ("name", MAX_NAME_CHARS)):
            if not isinstance(call[key], str):
                raise MessageInvalidError(f"tool call {index}: '{key}' must be a string.")
            if len(call[key]) > limit:
                raise MessageInvalidError(f"tool call {index}: '{key}' is longer than {limit} characters.")
        calls.append({"id": call["id"], "name": call["name"], "args": call["args"]})
    return calls


def checked_parts(value: Any) -> list[dict[str, Any]]:
    """``value`` as stored parts, or ``MessageInvalidError`` naming the first problem."""
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise MessageInvalidError("'parts' must be a list.")
    parts: list[dict[str, Any]] = []
    for index, part in enumerate(value, start=1):
        kind = part.get("type") if isinstance(part, Mapping) else None
        if not isinstance(part, Mapping) or not isinstance(kind, str) or kind not in PART_KEYS:
            raise MessageInvalidError(
                f"part {index} must be an object whose 'type' is one of {', '.join(PART_KEYS)}."
            )
        keys = PART_KEYS[kind]
        if set(part) != {"type", *keys}:
            wanted = ", ".join(repr(k) for k in ("type", *keys))
            raise MessageInvalidError(f"part {index} ({kind}) must hold exactly {wanted}.")
        for key in keys:
            if not isinstance(part[key], str):
                raise MessageInvalidError(f"part {index} ({kind}): '{key}' must be a string.")
            if key in _BOUNDS and len(part[key]) > _BOUNDS[key]:
                raise MessageInvalidError(
                    f"part {index} ({kind}): '{key}' is longer than {_BOUNDS[key]} characters."
                )
        parts.append({"type": kind, **{key: part[key] for key in keys}})
    return parts
