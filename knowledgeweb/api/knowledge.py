"""Server-side retrieval endpoints: capabilities and search (docs/architecture.md#http-api).

Handlers are thin: a schema in, one service or selector, a schema out. The
retrieval service's refusals carry their own status (400 invalid, 403 refused,
422 a query mode the binding does not allow, 424 provider failure without a
thread) and a stable ``code``; like every domain error they become JSON in
``knowledgeweb.api.main``. A provider failure's code says its kind
(``ProviderErrorCode``), in the 424 body and in an error tool message's artifact.
"""

from __future__ import annotations

from typing import Any, Literal
from uuid import UUID

from django.contrib.auth.models import User
from django.http import HttpRequest
from ninja import Field, Query, Router, Schema, Status

from knowledgeweb.api.auth import rate_limit, request_user
from knowledgeweb.api.text import NonBlankText, StorableInput, Text
from knowledgeweb.bindings.choices import BindingTool
from knowledgeweb.providers.errors import ProviderErrorCode
from knowledgeweb.providers.registry import all_query_modes, provider_specs
from knowledgeweb.providers.selection import DatasetSelection
from knowledgeweb.retrieval import retrieval_capabilities, retrieval_search
from knowledgeweb.review.access import thread_get_for_writer

router = Router(tags=["knowledge"])

#: Every query mode a provider offers (the registry's); a binding's own are checked by the service.
QUERY_MODES = all_query_modes()
#: The retrieval tools a binding can offer: the only values ``tool`` takes.
TOOLS = tuple(BindingTool.values)


def _modes_by_provider() -> str:
    """The modes each provider's tools take, from the registry, for the schema's description."""
    lines = []
    without = []
    for spec in provider_specs():
        if spec.modes is None:
            without.append(spec.label)
            continue
        tools = "; ".join(
            f"{tool}: {', '.join(modes)} (default {spec.modes.default_modes.get(tool, 'none')})"
            for tool, modes in spec.modes.tool_modes.items()
        )
        lines.append(f"{spec.label}: {tools}.")
    if without:
        lines.append(f"{', '.join(without)}: no modes; a search naming one answers 422 mode_not_supported.")
    return " ".join(lines)


Input = StorableInput


class ErrorOut(Schema):
    detail: str


class KnowledgeErrorOut(Schema):
    detail: str
    code: str = Field(
        description="A stable reason, e.g. forbidden, invalid_request, binding_unavailable, invalid_scope."
    )


class InvalidOut(Schema):
    detail: str
    code: str | None = Field(
        default=None,
        description="mode_not_allowed or mode_not_supported for a query mode the binding refuses "
        "(nothing was sent upstream); absent for a body that fails the schema.",
    )
    errors: list[dict[str, Any]] | None = Field(default=None, description="The schema's findings.")


class ProviderErrorOut(Schema):
    detail: str
    code: ProviderErrorCode = Field(
        description="Why the provider failed: provider_timeout (the binding's timeout, one deadline for "
        "the whole search, ran out), provider_unreachable, provider_auth (the key was rejected), "
        "provider_rate_limited (HTTP 429), provider_server_error (HTTP 5xx), provider_bad_response "
        "(not the documented answer), provider_rejected (the provider refused the query or selection), "
        "provider_redirect_refused, provider_too_large (over 4 MiB), provider_misconfigured, "
        "provider_adapter_error."
    )


class CapabilityOut(Schema):
    binding: str
    provider: str
    tool: str
    operations: list[str]
    scope: Literal["all", "selected"]
    top_k: int
    query_modes: list[str] = Field(
        description="LightRAG: the query modes a search of this tool may name in 'mode'; empty otherwise."
    )
    default_mode: str | None = Field(
        description="LightRAG: the mode used when a search names none; null for other providers."
    )


class CapabilitiesQuery(Schema):
    agent_name: Text = Field("", max_length=100, description="The agent whose bindings to list.")


class CapabilitiesOut(Schema):
    agent_name: str
    tools: list[CapabilityOut]


class DatasetSelectionIn(Input):
    dataset_id: Text = Field(min_length=1, max_length=256)
    document_ids: list[Text] = Field(
        default_factory=list, description="Empty: the whole dataset. At most 1000 documents in all."
    )


class ScopeSelectionIn(Input):
    datasets: list[DatasetSelectionIn] = Field(min_length=1)


class SearchIn(Input):
    tool: Literal[TOOLS] = Field(  # type: ignore[valid-type]
        description="knowledge_search or entity_relations_search (LightRAG only)."
    )
    query: NonBlankText = Field(min_length=1, description="What to search for; blank queries are refused.")
    agent_name: Text = Field(default="", max_length=100)
    binding: Text | None = Field(
        default=None,
        description="The binding to use. Needed when several of your bindings offer the tool: "
        "one request uses exactly one binding, so selections never mix providers.",
    )
    scope: Literal["all"] | ScopeSelectionIn | None = Field(
        default=None,
        description="Omitted or 'all': the binding's own scope. A selection narrows a RAGFlow binding's "
        "scope (never widens it); LightRAG and the local index refuse any selection.",
    )
    thread_id: UUID | None = Field(
        default=None, description="Append the result to this thread as a tool message."
    )
    mode: Literal[QUERY_MODES] | None = Field(  # type: ignore[valid-type]
        default=None,
        description="The query mode, one of the binding's allowed modes (see /knowledge/capabilities). "
        "Omitted: the binding's default, else the provider's. A mode the binding does not allow "
        "answers 422 mode_not_allowed and nothing is sent upstream. By provider: " + _modes_by_provider(),
    )


class SearchOut(Schema):
    content: str
    artifact: dict[str, Any] | None = Field(
        description='The evidence; for a failure recorded in a thread, {"error": {"code": ...}}.'
    )
    status: Literal["success", "error"]
    binding: str
    provider: str
    message_id: UUID | None = None
    error_code: ProviderErrorCode | None = Field(
        default=None, description="Why the provider failed, when status is error; null otherwise."
    )


_AUTH_ERRORS: dict[int, Any] = {401: ErrorOut}
_ERRORS: dict[int, Any] = {
    **_AUTH_ERRORS,
    400: KnowledgeErrorOut,
    403: KnowledgeErrorOut,
    404: ErrorOut,
    413: ErrorOut,
    422: InvalidOut,
    424: ProviderErrorOut,
}


@router.get(
    "/capabilities",
    response={200: CapabilitiesOut, **_AUTH_ERRORS, 422: ErrorOut},
    summary="Tools you may use",
)
def capabilities(request: HttpRequest, query: Query[CapabilitiesQuery]) -> CapabilitiesOut:
    """Each tool you may run as ``agent_name``, per binding, with its capability operations."""
    offered = retrieval_capabilities(user=request_user(request), agent_name=query.agent_name)
    return CapabilitiesOut(
        agent_name=query.agent_name,
        tools=[
            CapabilityOut(
                binding=c.binding,
                provider=c.provider,
                tool=c.tool,
                operations=list(c.operations),
                scope="selected" if c.scope == "selected" else "all",
                top_k=c.top_k,
                query_modes=list(c.query_modes),
                default_mode=c.default_mode,
            )
            for c in offered
        ],
    )


@router.post("/search", response={200: SearchOut, **_ERRORS}, summary="Run a retrieval tool")
def search(request: HttpRequest, payload: SearchIn) -> Status[Any]:
    """Run ``tool`` server-side through one binding you are bound to.

    With ``thread_id`` the result is appended as a tool message (its evidence
    written by the server) and ``message_id`` names it; a provider failure is then
    recorded as a tool message with ``status: "error"`` and no evidence. Without a
    thread a provider failure answers 424. Either way ``code`` / ``error_code`` says
    which kind of failure it was. Refusals (403), invalid requests (400) and a query
    mode the binding does not allow (422) send nothing upstream. The binding's timeout
    bounds the whole search, every request of it included. Searches are limited per
    token (429 with ``Retry-After``).
    """
    rate_limit(request, "search")
    return Status(200, search_run(user=request_user(request), payload=payload))


def search_run(*, user: User, payload: SearchIn) -> SearchOut:
    """The search behind ``POST /search``, shared with the MCP server so both answer alike."""
    scope: Literal["all"] | tuple[DatasetSelection, ...] | None
    if isinstance(payload.scope, ScopeSelectionIn):
        scope = tuple(
            DatasetSelection(dataset_id=d.dataset_id, document_ids=tuple(d.document_ids))
            for d in payload.scope.datasets
        )
    else:
        scope = payload.scope
    if payload.thread_id is not None:
        # A reviewer may read the thread but not append to it: 403 before any search runs.
        thread_get_for_writer(user=user, thread_id=payload.thread_id)
    outcome = retrieval_search(
        user=user,
        tool=payload.tool,
        query=payload.query,
        agent_name=payload.agent_name,
        binding_name=payload.binding,
        scope=scope,
        thread_id=payload.thread_id,
        mode=payload.mode,
    )
    return SearchOut(
        content=outcome.content,
        artifact=outcome.artifact,
        status=outcome.status,
        binding=outcome.binding,
        provider=outcome.provider,
        message_id=outcome.message_id,
        error_code=outcome.error_code,
    )
