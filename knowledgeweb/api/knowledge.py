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

from django.contrib.auth.models import User
from django.http import HttpRequest
from ninja import Query, Router, Status

from knowledgeweb.api.auth import rate_limit, request_user
from knowledgeweb.api.schemas.errors import ErrorOut, InvalidOut, ProviderErrorOut
from knowledgeweb.api.schemas.knowledge import (
    CapabilitiesOut,
    CapabilitiesQuery,
    CapabilityOut,
    ScopeSelectionIn,
    SearchIn,
    SearchOut,
)
from knowledgeweb.providers.selection import DatasetSelection
from knowledgeweb.retrieval import retrieval_capabilities, retrieval_search
from knowledgeweb.review.access import thread_get_for_writer

router = Router(tags=["knowledge"])


_AUTH_ERRORS: dict[int, Any] = {401: ErrorOut}
_ERRORS: dict[int, Any] = {
    **_AUTH_ERRORS,
    400: ErrorOut,
    403: ErrorOut,
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
