"""Exporting a thread as JSON (messages as stored) or Markdown (citations as numbered references).

``thread_export`` reads the thread's messages (and, for Markdown, their stored renders) through
the selectors; the JSON is built here and the Markdown in ``threads.interchange.markdown``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from django.core.serializers.json import DjangoJSONEncoder

from knowledgeweb.threads.errors import ExportFormatError
from knowledgeweb.threads.interchange.markdown import thread_export_markdown
from knowledgeweb.threads.models import Message, MessageRender, Thread
from knowledgeweb.threads.selectors import thread_messages, thread_renders
from knowledgeweb.threads.tallies import TALLY_FIELDS

ExportFormat = Literal["json", "markdown"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("json", "markdown")
#: Marks the JSON export; the document is also a valid import body.
JSON_EXPORT_FORMAT = "knowledgeweb.thread.v1"


@dataclass(frozen=True, slots=True)
class ThreadExport:
    """An exported thread: its text, content type and file name."""

    content: str
    content_type: str
    filename: str


def export_format_check(format: str) -> ExportFormat:
    """``format`` if it is one the export knows; otherwise ``ExportFormatError``."""
    for known in EXPORT_FORMATS:
        if format == known:
            return known
    raise ExportFormatError(f"unknown export format {format!r}; expected json or markdown.")


def export_document(
    *,
    thread: Thread,
    format: ExportFormat,
    messages: list[Message],
    renders: Mapping[Any, MessageRender],
) -> ThreadExport:
    """``thread`` as ``json`` (``renders`` unused), or as ``markdown`` from its messages' ``renders``."""
    stem = f"thread-{thread.id}"
    if format == "json":
        return ThreadExport(
            content=thread_export_json(thread, messages),
            content_type="application/json",
            filename=f"{stem}.json",
        )
    return ThreadExport(
        content=thread_export_markdown(thread, messages, renders),
        content_type="text/markdown; charset=utf-8",
        filename=f"{stem}.md",
    )


# --- JSON -----------------------------------------------------------------------------------------


def thread_export_json(thread: Thread, messages: list[Message]) -> str:
    """The thread with its messages exactly as stored.

    The document is also an import body (``title``, ``agent_name``, ``messages``).
    """
    document: dict[str, Any] = {
        "format": JSON_EXPORT_FORMAT,
        "id": thread.id,
        "title": thread.title,
        "agent_name": thread.agent_name,
        "created_at": thread.created_at,
        "updated_at": thread.updated_at,
        "messages": [
            {
                "id": m.id,
                "seq": m.seq,
                "type": m.type,
                "name": m.name,
                "tool_call_id": m.tool_call_id,
                "content": m.content,
                "artifact": m.artifact,
                "tool_calls": m.tool_calls,
                "parts": m.parts,
                "status": m.status,
                "digest": m.digest,
                "created_at": m.created_at,
            }
            for m in messages
        ],
    }
    return json.dumps(document, cls=DjangoJSONEncoder, ensure_ascii=False, indent=2) + "\n"


def thread_export(*, thread: Thread, format: str) -> ThreadExport:
    """Export ``thread`` as ``json`` (its messages as stored) or ``markdown`` (from their renders)."""
    known = export_format_check(format)
    messages = thread_messages(thread=thread, with_artifacts=known == "json")
    if known == "markdown":
        # The header's tally: the counters move in SQL on each write, not on this instance.
        thread.refresh_from_db(fields=list(TALLY_FIELDS))
    renders = thread_renders(thread=thread, messages=messages) if known == "markdown" else {}
    return export_document(thread=thread, format=known, messages=messages, renders=renders)
