"""How a caller's message is recorded: ``POST /api/threads/{id}/messages`` and the MCP tools
that write messages take a ``MessageIn`` (``api/schemas/messages.py``) and append it here."""

from __future__ import annotations

from knowledgeweb.api.schemas.messages import MessageIn
from knowledgeweb.threads.interchange.shapes import read_message
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.services import message_append


def message_record(*, thread: Thread, payload: MessageIn) -> Message:
    """Append ``payload`` to ``thread``: its tool calls and parts read exactly as an import
    reads them (``threads.interchange.shapes.read_message``), so a recorded thread holds what an imported
    one would. Shared by the API and the MCP tools."""
    (fields,) = read_message(
        {
            "type": payload.type,
            "content": str(payload.content),
            "tool_calls": payload.tool_calls or [],
            "parts": payload.parts or [],
        }
    )
    return message_append(
        thread=thread,
        type=payload.type,
        content=str(payload.content),
        name=payload.name,
        tool_call_id=payload.tool_call_id,
        artifact=payload.artifact,
        status=payload.status,
        tool_calls=list(fields.tool_calls),
        parts=list(fields.parts),
    )
