"""The MCP tools: what each accepts, what it answers, and the synchronous call behind it.

Every tool validates its arguments with the API's own request schema and calls the
service the matching API route calls (``search_run``, ``thread_create``,
``message_record``, ``citation_report_out``); its structured result is the JSON the API
answers, rendered by the API's renderer, so the two cannot differ. The search tools'
text block is the API's ``content``: the model reads exactly the text whose citation
links the viewer later verifies, and ``structuredContent`` carries the whole API body
(content, artifact with the evidence, status, binding, provider, message id).

Everything here runs in a worker thread: it touches the database.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest
from ninja.errors import ValidationError as NinjaValidationError
from pydantic import BaseModel, Field, ValidationError

from knowledgeweb.api.knowledge import search_run
from knowledgeweb.api.main import api
from knowledgeweb.api.messages import message_record
from knowledgeweb.api.schemas.knowledge import SearchIn, SearchOut
from knowledgeweb.api.schemas.messages import MessageIn
from knowledgeweb.api.schemas.text import JsonObject, StorableInput, Text, storable
from knowledgeweb.api.schemas.threads import CitationReportOut, MessageOut, ThreadIn, ThreadOut
from knowledgeweb.api.threads import citation_report_out
from knowledgeweb.mcp_server import limits
from knowledgeweb.mcp_server.errors import arguments_invalid, error_body, is_internal
from knowledgeweb.mcp_server.identity import Caller
from knowledgeweb.review.access import thread_get_for_review_reader, thread_get_for_writer
from knowledgeweb.threads.services import thread_create

logger = logging.getLogger(__name__)

SEARCH_TOOLS = ("knowledge_search", "entity_relations_search")


@dataclass(frozen=True)
class ToolResult:
    """What a tool answers: the text a model reads, the API's JSON, and the API's status."""

    text: str
    structured: dict[str, Any]
    status: int = 200

    @property
    def is_error(self) -> bool:
        return self.status >= 400


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    run: Callable[[Caller, Mapping[str, Any]], ToolResult]
    read_only: bool = False
    open_world: bool = False


class Arguments(StorableInput):
    """Tool arguments: plain pydantic, like the API's request bodies (no NUL, no surrogate)."""


class ThreadArguments(Arguments):
    thread_id: UUID = Field(description="The thread's id, as create_thread answered it.")


class AnswerArguments(ThreadArguments):
    content: Text = Field(
        description="Your answer in Markdown. Cite a source with the exact link a search in this "
        "thread gave for it, e.g. [citation:Guide](#knowledge-source-...). Empty when the message "
        "only calls tools."
    )
    tool_calls: list[JsonObject] | None = Field(
        default=None,
        description="The tool calls this AI message made, as LangChain {id, name, args} or OpenAI "
        "{id, type: function, function: {name, arguments}}: record them before the searches they "
        "ask for, so the thread shows which call each result answers.",
    )


class QuestionArguments(ThreadArguments):
    content: Text = Field(description="The user's question, as they asked it.")


def _rendered(out: BaseModel) -> tuple[str, dict[str, Any]]:
    """The API's JSON for ``out``: the bytes its renderer writes, and their value."""
    text = api.renderer.render(HttpRequest(), out.model_dump(), response_status=200)
    decoded = text.decode("utf-8") if isinstance(text, bytes) else str(text)
    return decoded, json.loads(decoded)


def _search(tool: str) -> Callable[[Caller, Mapping[str, Any]], ToolResult]:
    def run(caller: Caller, arguments: Mapping[str, Any]) -> ToolResult:
        # The tool and the agent come from the server, never from the model's arguments.
        payload = SearchIn.model_validate({**arguments, "tool": tool, "agent_name": caller.agent_name})
        out: SearchOut = search_run(user=caller.user, payload=payload)
        _, structured = _rendered(out)
        return ToolResult(text=out.content, structured=structured)

    return run


def _create_thread(caller: Caller, arguments: Mapping[str, Any]) -> ToolResult:
    payload = ThreadIn.model_validate({**arguments, "agent_name": caller.agent_name})
    thread = thread_create(owner=caller.user, title=payload.title, agent_name=payload.agent_name)
    text, structured = _rendered(ThreadOut.model_validate(thread, from_attributes=True))
    return ToolResult(text=text, structured=structured, status=201)


def _append_answer(caller: Caller, arguments: Mapping[str, Any]) -> ToolResult:
    answer = AnswerArguments.model_validate(arguments)
    # The API's message validation (no NUL, ...); the length limit is the service's.
    payload = MessageIn.model_validate(
        {"type": "ai", "content": answer.content, "tool_calls": answer.tool_calls}
    )
    return _recorded(caller, answer.thread_id, payload)


def _record_question(caller: Caller, arguments: Mapping[str, Any]) -> ToolResult:
    question = QuestionArguments.model_validate(arguments)
    payload = MessageIn.model_validate({"type": "human", "content": question.content})
    return _recorded(caller, question.thread_id, payload)


def _recorded(caller: Caller, thread_id: UUID, payload: MessageIn) -> ToolResult:
    """Append ``payload`` as the API's append does (``message_record``) and answer its JSON."""
    thread = thread_get_for_writer(user=caller.user, thread_id=thread_id)
    message = message_record(thread=thread, payload=payload)
    text, structured = _rendered(MessageOut.model_validate(message, from_attributes=True))
    return ToolResult(text=text, structured=structured, status=201)


def _citation_report(caller: Caller, arguments: Mapping[str, Any]) -> ToolResult:
    payload = ThreadArguments.model_validate(arguments)
    thread = thread_get_for_review_reader(reader=caller.user, thread_id=payload.thread_id)
    text, structured = _rendered(citation_report_out(thread=thread))
    return ToolResult(text=text, structured=structured)


def _input_schema(model: type[BaseModel], *, without: tuple[str, ...] = ()) -> dict[str, Any]:
    schema = model.model_json_schema()
    for name in without:
        schema["properties"].pop(name, None)
    schema["required"] = [name for name in schema.get("required", []) if name not in without]
    return schema


def _output_schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema(mode="serialization")


_SEARCH_ADVICE = (
    " Cite a hit with the exact Markdown link shown beside it. Pass thread_id to record the result "
    "in that thread: only citations of results recorded in a thread before an answer find "
    "their source in it. Refusals carry the API's code (binding_unavailable, binding_ambiguous, forbidden, ...)."
)

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="knowledge_search",
        title="Search the knowledge base",
        description="Search the documents one of your knowledge bindings gives you access to."
        + _SEARCH_ADVICE,
        input_schema=_input_schema(SearchIn, without=("tool", "agent_name")),
        output_schema=_output_schema(SearchOut),
        run=_search("knowledge_search"),
        open_world=True,
    ),
    ToolSpec(
        name="entity_relations_search",
        title="Search entity relations",
        description="Search the entities and relations of a knowledge graph (LightRAG bindings)."
        + _SEARCH_ADVICE,
        input_schema=_input_schema(SearchIn, without=("tool", "agent_name")),
        output_schema=_output_schema(SearchOut),
        run=_search("entity_relations_search"),
        open_world=True,
    ),
    ToolSpec(
        name="create_thread",
        title="Create a thread",
        description="Create a thread that records your searches and answers for review; answers its id.",
        input_schema=_input_schema(ThreadIn, without=("agent_name",)),
        output_schema=_output_schema(ThreadOut),
        run=_create_thread,
    ),
    ToolSpec(
        name="record_question",
        title="Record the question",
        description="Record the user's question in a thread as a human message, before you search "
        "and answer, so the thread reads as your conversation did.",
        input_schema=_input_schema(QuestionArguments),
        output_schema=_output_schema(MessageOut),
        run=_record_question,
    ),
    ToolSpec(
        name="append_answer",
        title="Append an answer",
        description="Append your answer to a thread as an AI message. Its citations are resolved against "
        "the search results recorded earlier in the same thread; any other citation is shown as no source. "
        "With tool_calls (and empty content), record the calls you are about to make.",
        input_schema=_input_schema(AnswerArguments),
        output_schema=_output_schema(MessageOut),
        run=_append_answer,
    ),
    ToolSpec(
        name="citation_report",
        title="Citation report",
        description="Every citation in a thread's answers with its state (resolved, unresolved or malformed), "
        "the reason, and the source a resolved citation points to.",
        input_schema=_input_schema(ThreadArguments),
        output_schema=_output_schema(CitationReportOut),
        run=_citation_report,
        read_only=True,
    ),
)

TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}


def _check_agent_name(agent_name: str) -> None:
    # The agent name comes from the host (a header, clientInfo, the environment), not from the
    # arguments; it names bindings in queries, so it is held to the same rule as every string.
    try:
        storable(agent_name)
    except ValueError as exc:
        error = {"type": "value_error", "loc": ("agent_name",), "msg": f"Value error, {exc}"}
        raise NinjaValidationError([error]) from exc


def tool_call(*, caller: Callable[[], Caller], name: str, arguments: Mapping[str, Any]) -> ToolResult:
    """Run the tool ``name`` for whoever ``caller()`` names, in the API's order of checks:
    the token, the rate limit, the body cap, the arguments, then the service."""
    spec = TOOLS_BY_NAME[name]
    try:
        who = caller()
        _check_agent_name(who.agent_name)
        limits.tool_call_check(caller=who, tool=name)
        # surrogatepass: an unpaired surrogate is measured here and refused by the schema below.
        text = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
            raise RequestDataTooBig(f"Tool arguments of {size} bytes.")
        return spec.run(who, arguments)
    except ValidationError as exc:
        body = error_body(arguments_invalid(exc))
    except Exception as exc:
        body = error_body(exc)
        if is_internal(body):
            logger.exception("MCP tool %s failed unexpectedly", name)  # the details stay here
    return ToolResult(text=json.dumps(body, ensure_ascii=False), structured=body, status=body["status"])
