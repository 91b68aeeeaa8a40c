"""Reading agent frameworks' thread JSON into plain message fields (docs/interop.md, docs/decisions/0023-imports-tool-calls-and-parts.md).

One module per family of shapes: ``bodies`` (where a body keeps its messages), ``messages``
(one message: LangChain, OpenAI, Anthropic), ``content`` (content parts), ``calls`` (tool
calls), ``responses`` (OpenAI Responses items and the turns they make), ``results`` (a
knowledgeweb result inside a client's wrapper), ``docs`` (what is accepted, in words) and
``common`` (the fields a message becomes).
"""

from __future__ import annotations

from knowledgeweb.threads.interchange.shapes.bodies import ImportBody, read_import_body
from knowledgeweb.threads.interchange.shapes.common import MessageFields
from knowledgeweb.threads.interchange.shapes.content import content_text
from knowledgeweb.threads.interchange.shapes.docs import (
    ACCEPTED_BODIES,
    ACCEPTED_MESSAGES,
    IMPORT_BODIES_DOC,
    IMPORT_MESSAGES_DOC,
)
from knowledgeweb.threads.interchange.shapes.messages import (
    ROLE_NAMES,
    TYPE_NAMES,
    message_fields_from_json,
    read_message,
)
from knowledgeweb.threads.interchange.shapes.responses import join_turns
from knowledgeweb.threads.interchange.shapes.results import is_result, result_in

__all__ = [
    "ACCEPTED_BODIES",
    "ACCEPTED_MESSAGES",
    "IMPORT_BODIES_DOC",
    "IMPORT_MESSAGES_DOC",
    "ROLE_NAMES",
    "TYPE_NAMES",
    "ImportBody",
    "MessageFields",
    "content_text",
    "is_result",
    "join_turns",
    "message_fields_from_json",
    "read_import_body",
    "read_message",
    "result_in",
]
