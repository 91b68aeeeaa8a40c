"""Server-side retrieval endpoints: capabilities and search (SPEC §7).

Handlers are thin: a schema in, one service or selector, a schema out. The
retrieval service's refusals carry their own status (400 invalid, 403 refused,
424 provider failure without a thread) and a stable ``code``; like every domain
error they become JSON in ``knowledgeweb.api.main``.
"""

from __future__ import annotations

from typing import Any, Literal
from uuid import UUID

from django.contrib.auth.models import User
from django.http import HttpRequest
from ninja import Field, Router, Schema, Status
from pydantic import BaseModel

from knowledgeweb.api.auth import request_user
from knowledgeweb.providers.ragflow import DatasetSelection
from knowledgeweb.retrieval import retrieval_capabilities, retrieval_search

router = Router(tags=["knowledge"])


class Input(BaseModel):
    """Request bodies are plain pydantic: only a JSON object validates (ninja's ``Schema``
    would read attributes off any value, a bare JSON string included)."""


class ErrorOut(Schema):
    detail: str


class KnowledgeErrorOut(Schema):
    detail: str
    code: str = Field(description="A stable reason, e.g. forbidden, invalid_request, provider_error.")


class CapabilityOut(Schema):
    binding: str
    provider: str
    tool: str
    operations: list[str]
    scope: Literal["all", "selected"]
    top_k: int


class CapabilitiesOut(Schema):
    agent_name: str
    tools: list[CapabilityOut]


class DatasetSelectionIn(Input):
    dataset_id: str = Field(min_length=1, max_length=256)
    document_ids: list[str] = Field(
        default_factory=list, description="Empty: the whole dataset. At most 1000 documents in all."
    )


class ScopeSelectionIn(Input):
    datasets: list[DatasetSelectionIn] = Field(min_length=1)


class SearchIn(Input):
    tool: str = Field(description="knowledge_search or entity_relations_search (LightRAG only).")
    query: str = Field(min_length=1, description="What to search for; blank queries are refused.")
    agent_name: str = Field(default="", max_length=100)
    binding: str | None = Field(
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


class SearchOut(Schema):
    content: str
    artifact: dict[str, Any] | None
    status: Literal["success", "error"]
    binding: str
    provider: str
    message_id: UUID | None = None


_AUTH_ERRORS: dict[int, Any] = {401: ErrorOut}
_ERRORS: dict[int, Any] = {
    **_AUTH_ERRORS,
    400: KnowledgeErrorOut,
    403: KnowledgeErrorOut,
    404: ErrorOut,
    413: ErrorOut,
    422: ErrorOut,
    424: KnowledgeErrorOut,
}


@router.get(
    "/capabilities",
    response={200: CapabilitiesOut, **_AUTH_ERRORS, 422: ErrorOut},
    summary="Tools you may use",
)
def capabilities(request: HttpRequest, agent_name: str = "") -> CapabilitiesOut:
    """Each tool you may run as ``agent_name``, per binding, with its capability operations."""
    offered = retrieval_capabilities(user=request_user(request), agent_name=agent_name)
    return CapabilitiesOut(
        agent_name=agent_name,
        tools=[
            CapabilityOut(
                binding=c.binding,
                provider=c.provider,
                tool=c.tool,
                operations=list(c.operations),
                scope="selected" if c.scope == "selected" else "all",
                top_k=c.top_k,
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
    thread a provider failure answers 424. Refusals (403) and invalid requests (400)
    send nothing upstream.
    """
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
    outcome = retrieval_search(
        user=user,
        tool=payload.tool,
        query=payload.query,
        agent_name=payload.agent_name,
        binding_name=payload.binding,
        scope=scope,
        thread_id=payload.thread_id,
    )
    return SearchOut(
        content=outcome.content,
        artifact=outcome.artifact,
        status=outcome.status,
        binding=outcome.binding,
        provider=outcome.provider,
        message_id=outcome.message_id,
    )
