"""Importing a whole thread from any agent framework's JSON: all or nothing (docs/decisions/0023-imports-tool-calls-and-parts.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from knowledgeweb.threads.errors import MessageInvalidError
from knowledgeweb.threads.interchange.shapes import MessageFields, join_turns, read_import_body, read_message
from knowledgeweb.threads.models import Message, MessageType, Thread
from knowledgeweb.threads.quotas import import_precheck, message_size, messages_admit, tallies_add
from knowledgeweb.threads.services.messages import message_build
from knowledgeweb.threads.services.renders import renders_prepare, renders_store
from knowledgeweb.threads.services.threads import thread_create

#: An import larger than this is refused before anything is read.
MAX_IMPORT_MESSAGES = 10_000
#: The title of an imported thread that names none and has no human text to name it by.
DEFAULT_TITLE = "Imported thread"
_TITLE_CHARS = 200


def thread_import_body(
    *,
    owner: User,
    body: Any,
    title: str | None = None,
    agent_name: str | None = None,
    trusted: bool = False,
) -> Thread:
    """Import a thread from a body in any accepted shape (``knowledgeweb.threads.interchange.shapes``).

    ``title`` and ``agent_name`` override the body's; a thread whose body names no
    title is titled by its first human message.
    """
    found = read_import_body(body)
    return thread_import(
        owner=owner,
        title=title if title is not None else found.title,
        agent_name=agent_name if agent_name is not None else found.agent_name or "",
        messages=found.messages,
        trusted=trusted,
    )


def thread_import(
    *,
    owner: User,
    title: str | None,
    messages: Sequence[Any],
    agent_name: str = "",
    trusted: bool = False,
) -> Thread:
    """Create a thread holding ``messages`` in order, or nothing at all.

    Every message is read and validated before the first write; an error names
    the failing message by its 1-based position ("message 57: ..."). Reserved
    evidence keys are stripped from every artifact unless ``trusted`` (the
    admin-only ``import_thread --trusted``) or a tool message's receipt checks for
    ``owner`` (``threads.receipts``). A ``title`` of None is derived from
    the first human message.
    """
    if len(messages) > MAX_IMPORT_MESSAGES:
        raise MessageInvalidError(
            f"an import holds at most {MAX_IMPORT_MESSAGES} messages, not {len(messages)}."
        )
    if not messages:
        raise MessageInvalidError("the import holds no messages; there is nothing to import.")
    read: list[MessageFields] = []
    positions: list[int] = []
    for position, raw in enumerate(messages, start=1):
        try:
            found = read_message(raw)
        except MessageInvalidError as exc:
            raise MessageInvalidError(str(exc), position=position) from exc
        read.extend(found)
        positions.extend([position] * len(found))
    if len(read) > MAX_IMPORT_MESSAGES:
        raise MessageInvalidError(
            f"an import holds at most {MAX_IMPORT_MESSAGES} messages, not {len(read)} "
            "(tool results count as messages of their own)."
        )
    # The items of one OpenAI Responses turn (reasoning, message, calls) are one AI message.
    read, positions = join_turns(read, positions)
    # Quotas first from the count, then (below) from the size, before anything is rendered.
    import_precheck(owner_id=owner.pk, count=len(read))
    read = _name_tool_messages(read)
    if title is None:
        title = derived_title(read)
    placeholder = Thread(owner=owner, title=title, agent_name=agent_name)
    built: list[Message] = []
    for position, fields in zip(positions, read, strict=True):
        try:
            built.append(
                message_build(
                    thread=placeholder,
                    type=fields.type,
                    content=fields.content,
                    name=fields.name,
                    tool_call_id=fields.tool_call_id,
                    artifact=fields.artifact,
                    status=fields.status,
                    trusted=trusted,
                    tool_calls=list(fields.tool_calls),
                    parts=list(fields.parts),
                    receipt_owner=owner,
                )
            )
        except MessageInvalidError as exc:
            raise MessageInvalidError(str(exc), position=position) from exc
    for seq, message in enumerate(built, start=1):
        message.seq = seq
    size = sum(
        message_size(content=m.content, artifact=m.artifact, tool_calls=m.tool_calls, parts=m.parts)
        for m in built
    )
    import_precheck(owner_id=owner.pk, count=len(built), nbytes=size)
    renderings = renders_prepare(built)  # rendered before the write, like an append
    with transaction.atomic():
        thread = thread_create(owner=owner, title=title, agent_name=agent_name)
        # The whole import against the thread's and the user's quotas, before any message is written.
        messages_admit(thread=thread, count=len(built), nbytes=size)
        for message in built:
            message.thread = thread
        Message.objects.bulk_create(built)
        renders_store(thread, built, renderings)
        tallies_add(thread=thread, count=len(built), nbytes=size)
    # The tallies and verdict counts were added in the database; the caller sees them too.
    thread.refresh_from_db()
    return thread


def _name_tool_messages(read: list[MessageFields]) -> list[MessageFields]:
    """Name a tool result after the call it answers, where its format names only the call's id.

    OpenAI ``role: tool`` messages and Anthropic ``tool_result`` parts carry no tool
    name; the call, in an earlier AI message, has it. Other shapes keep the name they
    were written with, so an export imports back exactly.
    """
    names: dict[str, str] = {}
    named: list[MessageFields] = []
    for fields in read:
        for call in fields.tool_calls:
            if call["id"] and call["name"]:
                names.setdefault(call["id"], call["name"])
        if fields.named_by_call and fields.tool_call_id in names:
            fields = replace(fields, name=names[fields.tool_call_id])
        named.append(fields)
    return named


def derived_title(read: Sequence[MessageFields]) -> str:
    """The first human message's text on one line, cut to the title's length; else ``DEFAULT_TITLE``."""
    for fields in read:
        if fields.type == MessageType.HUMAN:
            text = " ".join(fields.content.split())
            if text:
                return text if len(text) <= _TITLE_CHARS else text[: _TITLE_CHARS - 1].rstrip() + "…"
    return DEFAULT_TITLE
