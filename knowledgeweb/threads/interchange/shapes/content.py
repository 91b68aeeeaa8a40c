"""A message's ``content``: a string, or a list of parts in any of the frameworks' part formats.

Text parts are joined, without a separator as LangChain does, into the message's text;
``tool_use`` / ``tool_call`` parts become the AI message's tool calls; each ``tool_result``
part becomes a tool message of its own; thinking, refusal, image, audio and file parts become
the message's ``parts`` (see ``knowledgeweb.threads.parts``), with image and file data dropped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from knowledgeweb.threads.errors import MessageInvalidError
from knowledgeweb.threads.interchange.shapes.calls import content_tool_call
from knowledgeweb.threads.interchange.shapes.common import MessageFields, json_kind, optional_str
from knowledgeweb.threads.parts import MAX_KIND_CHARS, MAX_MEDIA_TYPE_CHARS, MAX_URL_CHARS

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


@dataclass(slots=True)
class Content:
    """What a content value holds, sorted by what the store makes of it."""

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
            f"'content' must be a string or a list of text parts, not {json_kind(value)}."
        )
    for index, part in enumerate(value, start=1):
        if isinstance(part, Mapping) and part.get("type") != "text":
            raise MessageInvalidError(
                f"content part {index} is {part.get('type')!r}; only text parts are accepted."
            )
    return read_content(value).text


def read_content(value: Any) -> Content:
    """Read a content value (None, a string or a list of parts); ``MessageInvalidError`` names a bad part."""
    read = Content()
    if value is None:
        return read
    if isinstance(value, str):
        read.text = value
        return read
    if not isinstance(value, list):
        raise MessageInvalidError(
            f"'content' must be a string or a list of content parts, not {json_kind(value)}."
        )
    texts: list[str] = []
    for index, part in enumerate(value, start=1):
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, Mapping):
            raise MessageInvalidError(
                f"content part {index} is {json_kind(part)}; a part is a string or an object."
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
                read.calls.append(content_tool_call(part))
            elif kind == "tool_result":
                read.results.append(_tool_result(part))
            else:
                read.parts.append(content_part(kind, part))
        except MessageInvalidError as exc:
            raise MessageInvalidError(f"content part {index} ({kind!r}): {exc}") from exc
    read.text = "".join(texts)
    return read


def _text_of(part: Mapping[str, Any]) -> str:
    text = part.get("text")
    if not isinstance(text, str):
        raise MessageInvalidError("a text part needs a string 'text'.")
    return text


def content_part(kind: str, part: Mapping[str, Any]) -> dict[str, Any]:
    """A part that is neither text nor a call nor a result, in its stored form."""
    if kind in _THINKING_PARTS:
        return {"type": "thinking", "text": thinking_text(part)}
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


def thinking_text(part: Mapping[str, Any]) -> str:
    """The visible text of a thinking or reasoning part (OpenAI's: its summary texts)."""
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


def _tool_result(part: Mapping[str, Any]) -> MessageFields:
    """An Anthropic ``tool_result`` part as the tool message it is."""
    content = read_content(part.get("content"))
    if content.calls or content.results:
        raise MessageInvalidError("a tool result may hold only text and media parts.")
    is_error = part.get("is_error", False)
    if not isinstance(is_error, bool):
        raise MessageInvalidError("'is_error' must be true or false.")
    return MessageFields(
        type="tool",
        content=content.text,
        tool_call_id=optional_str(part, "tool_use_id"),
        status="error" if is_error else "success",
        parts=tuple(content.parts),
        named_by_call=True,
    )
