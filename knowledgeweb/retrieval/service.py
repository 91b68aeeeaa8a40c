"""``retrieval_search``: the one server-side path that produces evidence.

authorize -> adapter -> ``format_result`` -> ``enforce_output_budget`` -> receipt
(``threads.receipts``) -> ``message_append(..., trusted=True)`` when a thread is given. Every refusal
happens before the adapter is built, so a refused call sends no request. A
provider failure never becomes evidence: with a thread it is recorded as a tool
message with ``status="error"``, without one it is a clear error.
"""

from __future__ import annotations

import logging
import traceback
from dataclasses import dataclass, replace
from typing import Any, Literal
from uuid import UUID, uuid4

from django.contrib.auth.models import User

from knowledgeweb.knowledge import RetrievalHit, RetrievalResult, enforce_output_budget, format_result_view
from knowledgeweb.providers.errors import ProviderError, ProviderErrorCode
from knowledgeweb.providers.redaction import Redactor
from knowledgeweb.providers.registry import provider_label
from knowledgeweb.retrieval.authorization import binding_authorize
from knowledgeweb.retrieval.errors import RetrievalFailedError, RetrievalInvalidError
from knowledgeweb.retrieval.modes import mode_resolve
from knowledgeweb.retrieval.registry import ProviderRequest, provider_for, provider_timeout
from knowledgeweb.retrieval.scope import RequestedScope, scope_resolve
from knowledgeweb.retrieval.selections import CachedSelectionMemory
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.quotas import quota_precheck
from knowledgeweb.threads.receipts import with_receipt
from knowledgeweb.threads.selectors import thread_get_for_owner
from knowledgeweb.threads.services import message_append

logger = logging.getLogger(__name__)

MAX_QUERY_CHARS = 4000
#: The global tool-output budget (docs/contract.md#formatting-and-budgets) applied to every retrieval message.
TOOL_OUTPUT_LIMIT = 16000


@dataclass(frozen=True)
class SearchOutcome:
    content: str
    artifact: dict[str, Any] | None
    status: Literal["success", "error"]
    binding: str
    provider: str
    message_id: UUID | None = None
    tool: str = "knowledge_search"
    #: Why the provider failed (``status == "error"`` only).
    error_code: ProviderErrorCode | None = None
    # The server's account of this search (hits shown of total, graph edges, truncation),
    # recorded as the tool message's ``tool_view``; never taken from a caller.
    view: dict[str, Any] | None = None


def retrieval_search(
    *,
    user: User,
    tool: str,
    query: str,
    agent_name: str = "",
    binding_name: str | None = None,
    scope: RequestedScope = None,
    thread_id: UUID | str | None = None,
    output_limit: int = TOOL_OUTPUT_LIMIT,
    mode: str | None = None,
) -> SearchOutcome:
    """Run ``tool`` for ``user`` through one authorized binding.

    ``output_limit`` is the tool-output budget; server-side callers (the demo) may lower it.
    ``mode`` picks one of a LightRAG binding's allowed query modes.

    Raises ``RetrievalInvalidError`` / ``RetrievalRefusedError`` / ``RetrievalModeError`` before any request,
    ``ThreadNotFound`` for a thread that is not the user's, ``QuotaExceededError`` for a
    thread or user at a quota (before any request, or at write for the tool message), and
    ``RetrievalFailedError`` for a provider failure when no thread is given.
    """
    query = query.strip()
    if not query:
        raise RetrievalInvalidError("The query is empty.")
    if len(query) > MAX_QUERY_CHARS:
        raise RetrievalInvalidError(f"The query is longer than {MAX_QUERY_CHARS} characters.")
    thread = thread_get_for_owner(owner=user, thread_id=thread_id) if thread_id is not None else None
    if thread is not None:
        # A full thread is refused before any request; the append is admitted again at write.
        quota_precheck(owner_id=user.pk, thread=thread)
    authorized = binding_authorize(user=user, agent_name=agent_name, tool=tool, binding_name=binding_name)
    binding = authorized.binding
    selection = scope_resolve(binding=binding, requested=scope)
    chosen_mode = mode_resolve(binding=binding, tool=tool, requested=mode)
    redactor = Redactor([authorized.api_key] if authorized.api_key else [])

    try:
        request = ProviderRequest(
            api_key=authorized.api_key,
            selection=selection,
            mode=chosen_mode,
            timeout=provider_timeout(binding),
            memory=CachedSelectionMemory(binding=binding, api_key=authorized.api_key or ""),
        )
        adapter = provider_for(binding, request)
        result = adapter.search(query, tool=tool, top_k=binding.top_k)
    except ProviderError as exc:
        return _failed(thread, binding.name, binding.provider, tool, redactor.message(str(exc)), exc.code)
    except Exception as exc:
        # An adapter bug must still end as a clear, redacted failure, never a 500;
        # the traceback is logged redacted too.
        trace = redactor.message("".join(traceback.format_exception(exc)))
        logger.error("Retrieval adapter for binding %s raised unexpectedly:\n%s", binding.name, trace)
        reason = redactor.message(f"unexpected {type(exc).__name__} in the {binding.provider} adapter.")
        return _failed(thread, binding.name, binding.provider, tool, reason, ProviderErrorCode.ADAPTER_ERROR)

    formatted = format_result_view(_redacted(result, redactor))
    content, budgeted = enforce_output_budget(formatted.content, formatted.artifact, output_limit)
    logger.info(
        "Retrieval via binding %s (%s, %s): %d hits", binding.name, binding.provider, tool, len(result.hits)
    )
    outcome = SearchOutcome(
        content=content,
        # Signed after the budget, over exactly the evidence returned: an import by this user
        # recognises it (threads/receipts.py); the receipt is no part of the content's budget.
        artifact=with_receipt(budgeted, user_id=user.pk, binding_id=binding.pk, tool=tool),
        status="success",
        binding=binding.name,
        provider=binding.provider,
        tool=tool,
        view=formatted.view_within(content),
    )
    return outcome if thread is None else retrieval_record(thread=thread, outcome=outcome)


def retrieval_record(*, thread: Thread, outcome: SearchOutcome) -> SearchOutcome:
    """Append a successful outcome of ``retrieval_search`` to ``thread`` as its tool message.

    For server-side callers that must search before they may write (the Ask page
    searches first, then writes its whole thread in one short transaction). Only
    outcomes this service produced carry evidence, so this stays the one writer
    of evidence keys besides ``import_thread --trusted``.
    """
    if outcome.status != "success" or outcome.message_id is not None:
        raise ValueError("only a successful outcome that is not yet recorded can be recorded")
    message = message_append(
        thread=thread,
        type="tool",
        name=outcome.tool,
        tool_call_id=_tool_call_id(),
        content=outcome.content,
        artifact=outcome.artifact,
        trusted=True,
        tool_view=outcome.view,
    )
    return replace(outcome, message_id=message.id)


def _failed(
    thread: Thread | None, binding_name: str, provider: str, tool: str, reason: str, code: ProviderErrorCode
) -> SearchOutcome:
    label = provider_label(provider)
    content = f"{tool} failed ({label}, binding '{binding_name}'): {reason}"
    logger.warning("Retrieval via binding %s failed (%s): %s", binding_name, code.value, reason)
    if thread is None:
        raise RetrievalFailedError(content, code=code.value)
    # The artifact says why, for agents reading the thread back; it is no evidence
    # (no reserved key), and the message is written untrusted like any caller's.
    artifact = error_artifact(code)
    message = message_append(
        thread=thread,
        type="tool",
        name=tool,
        tool_call_id=_tool_call_id(),
        content=content,
        artifact=artifact,
        status="error",
        trusted=False,
    )
    return SearchOutcome(
        content=content,
        artifact=artifact,
        status="error",
        binding=binding_name,
        provider=provider,
        message_id=message.id,
        tool=tool,
        error_code=code,
    )


def error_artifact(code: ProviderErrorCode) -> dict[str, Any]:
    """The artifact of an error tool message: ``{"error": {"code": "provider_timeout"}}``."""
    return {"error": {"code": code.value}}


def _redacted(result: RetrievalResult, redactor: Redactor) -> RetrievalResult:
    """Defence in depth: adapters already redact what they read, whatever the adapter."""

    def clean(value: str | None) -> str | None:
        return redactor.text(value) if value is not None else None

    def redacted_hit(hit: RetrievalHit) -> RetrievalHit:
        update = {
            "text": redactor.text(hit.text),
            "title": clean(hit.title),
            "dataset_name": clean(hit.dataset_name),
            "url": clean(hit.url),
            "source_entity": clean(hit.source_entity),
            "target_entity": clean(hit.target_entity),
            "entity_type": clean(hit.entity_type),
        }
        # A hit with nothing to remove is kept as it is: copying every hit of every search
        # cost more than the check itself.
        if all(getattr(hit, name) == value for name, value in update.items()):
            return hit
        return hit.model_copy(update=update)

    hits = tuple(redacted_hit(hit) for hit in result.hits)
    # The query is kept in the tool view ("Nothing found for …"): a key pasted into it is not.
    return result.model_copy(update={"hits": hits, "query": redactor.text(result.query)})


def _tool_call_id() -> str:
    return f"call_{uuid4().hex[:24]}"
