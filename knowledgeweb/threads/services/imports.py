"""Importing a whole thread from LangChain / LangGraph message JSON: all or nothing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from knowledgeweb.threads.errors import MessageInvalidError
from knowledgeweb.threads.imports import message_fields_from_json
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.quotas import message_size, messages_admit, tallies_add
from knowledgeweb.threads.services.messages import message_build
from knowledgeweb.threads.services.renders import renders_prepare, renders_store
from knowledgeweb.threads.services.threads import thread_create

#: An import larger than this is refused before anything is read.
MAX_IMPORT_MESSAGES = 10_000


def thread_import(
    *,
    owner: User,
    title: str,
    messages: Sequence[Any],
    agent_name: str = "",
    trusted: bool = False,
) -> Thread:
    """Create a thread holding ``messages`` in order, or nothing at all.

    Every message is read and validated before the first write; an error names
    the failing message by its 1-based position ("message 57: ..."). Reserved
    evidence keys are stripped from every artifact unless ``trusted`` (the
    admin-only ``import_thread --trusted``).
    """
    if len(messages) > MAX_IMPORT_MESSAGES:
        raise MessageInvalidError(
            f"an import holds at most {MAX_IMPORT_MESSAGES} messages, not {len(messages)}."
        )
    placeholder = Thread(owner=owner, title=title, agent_name=agent_name)
    built: list[Message] = []
    for position, raw in enumerate(messages, start=1):
        try:
            fields = message_fields_from_json(raw)
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
                )
            )
        except MessageInvalidError as exc:
            raise MessageInvalidError(str(exc), position=position) from exc
    for seq, message in enumerate(built, start=1):
        message.seq = seq
    size = sum(message_size(content=m.content, artifact=m.artifact) for m in built)
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
    return thread
