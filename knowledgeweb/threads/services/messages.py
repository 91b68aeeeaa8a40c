"""Appending messages: the one write path for a single message."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max

from knowledgeweb.knowledge import strip_reserved_keys
from knowledgeweb.threads.errors import MessageInvalidError
from knowledgeweb.threads.models import Message, MessageStatus, MessageType, Thread
from knowledgeweb.threads.parts import checked_parts, checked_tool_calls
from knowledgeweb.threads.quotas import message_size, messages_admit, tallies_add
from knowledgeweb.threads.services.renders import render_prepare, render_store
from knowledgeweb.threads.text import unstorable_field

#: Human, AI and system messages are parsed as Markdown once, when written (the viewer's
#: HTML, the citation report and the export text). markdown-it's cost on unmatched
#: brackets grows with the square of the length: past this size one hostile message costs
#: more than a second to write (bench/hostile.py, docs/decisions/0016-render-at-write.md).
#: Tool output is never parsed as Markdown, so only the request body limit bounds it.
MAX_PROSE_CHARS = 40_000


def message_digest(
    *, content: str, artifact: Any, tool_calls: list[Any] | None = None, parts: list[Any] | None = None
) -> str:
    """SHA-256 hex of the canonical JSON of the content, the artifact, and any tool calls and parts.

    A message without tool calls or parts hashes ``[content, artifact]`` as it always did,
    so the digests (and memoized validations) of messages written before they existed hold.
    """
    fields: list[Any] = [content, artifact]
    if tool_calls or parts:
        fields += [tool_calls or [], parts or []]
    canonical = json.dumps(fields, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def message_build(
    *,
    thread: Thread,
    type: str,
    content: str,
    name: str = "",
    tool_call_id: str = "",
    artifact: Any = None,
    status: str = MessageStatus.SUCCESS,
    trusted: bool = False,
    tool_view: dict[str, Any] | None = None,
    tool_calls: list[Any] | None = None,
    parts: list[Any] | None = None,
) -> Message:
    """A validated, unsaved message without its seq. Caller-supplied artifacts lose reserved keys.

    An artifact may be any JSON (docs/contract.md); only an object can carry evidence, so only
    an object has keys to strip, and any other value is stored as written. ``tool_view`` is the
    retrieval service's account of its own search; only a trusted (server-side) writer may set it.
    """
    if tool_view is not None and not (trusted and type == MessageType.TOOL):
        raise MessageInvalidError("only the retrieval service records a tool view.")
    if type not in MessageType.values:
        raise MessageInvalidError(
            f"unknown message type {type!r}; expected one of {', '.join(MessageType.values)}."
        )
    if not isinstance(content, str):
        raise MessageInvalidError("content must be a string.")
    if type != MessageType.TOOL and len(content) > MAX_PROSE_CHARS:
        raise MessageInvalidError(
            f"content of a {type} message is {len(content)} characters; the limit is {MAX_PROSE_CHARS}."
        )
    stored_artifact = artifact if trusted or not isinstance(artifact, dict) else strip_reserved_keys(artifact)
    stored_calls = checked_tool_calls(tool_calls or [])
    if stored_calls and type != MessageType.AI:
        raise MessageInvalidError(f"only an ai message carries tool calls, not a {type} message.")
    stored_parts = checked_parts(parts or [])
    problem = unstorable_field(
        {
            "content": content,
            "name": name,
            "tool_call_id": tool_call_id,
            "artifact": stored_artifact,
            "tool_calls": stored_calls,
            "parts": stored_parts,
        }
    )
    if problem is not None:
        raise MessageInvalidError(problem)
    message = Message(
        thread=thread,
        type=type,
        name=name,
        tool_call_id=tool_call_id,
        content=content,
        artifact=stored_artifact,
        tool_calls=stored_calls,
        parts=stored_parts,
        status=status,
        digest=message_digest(
            content=content, artifact=stored_artifact, tool_calls=stored_calls, parts=stored_parts
        ),
        tool_view=tool_view,
    )
    try:
        # seq is assigned under the lock, the thread is checked there too, and the
        # database enforces uniqueness: no query here, so a race cannot fail it.
        message.full_clean(exclude=["seq", "thread"], validate_unique=False, validate_constraints=False)
    except ValidationError as exc:
        raise MessageInvalidError(_describe(exc)) from exc
    return message


def message_append(
    *,
    thread: Thread,
    type: str,
    content: str,
    name: str = "",
    tool_call_id: str = "",
    artifact: Any = None,
    status: str = MessageStatus.SUCCESS,
    trusted: bool = False,
    tool_view: dict[str, Any] | None = None,
    tool_calls: list[Any] | None = None,
    parts: list[Any] | None = None,
) -> Message:
    """Append one message at the end of ``thread``, rendered and stored with its render.

    Reserved evidence keys are stripped from ``artifact`` unless ``trusted``
    (only server-side producers pass ``trusted=True``). ``seq`` is assigned
    atomically: concurrent appends never leave a gap or a duplicate.
    """
    message = message_build(
        thread=thread,
        type=type,
        content=content,
        name=name,
        tool_call_id=tool_call_id,
        artifact=artifact,
        status=status,
        trusted=trusted,
        tool_view=tool_view,
        tool_calls=tool_calls,
        parts=parts,
    )
    size = message_size(
        content=message.content, artifact=message.artifact, tool_calls=message.tool_calls, parts=message.parts
    )
    # Rendered before the lock is taken; ``render_store`` renders again only if evidence
    # arrived in between.
    prepared = render_prepare(thread, message)
    # Concurrent appends to one thread race for the next seq: the owner's and the thread's
    # locks serialize them (row locks on PostgreSQL; on SQLite every transaction begins
    # with the database's write lock, settings.DATABASES' transaction_mode).
    with transaction.atomic():
        # Locks the owner, then the thread, and refuses a write past a quota.
        messages_admit(thread=thread, count=1, nbytes=size)
        last = Message.objects.filter(thread=thread).aggregate(last=Max("seq"))["last"] or 0
        message.seq = last + 1
        message.save()
        render_store(thread, message, prepared)
        tallies_add(thread=thread, count=1, nbytes=size)
    return message


def _describe(exc: ValidationError) -> str:
    if hasattr(exc, "error_dict"):
        return "; ".join(
            f"{field}: {' '.join(str(m) for m in messages)}" for field, messages in exc.message_dict.items()
        )
    return " ".join(exc.messages)
