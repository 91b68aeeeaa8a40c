"""The retrieval endpoints' schemas: capabilities and search (``api/knowledge.py``)."""

from __future__ import annotations

from typing import Any, Literal
from uuid import UUID

from ninja import Field, Schema

from knowledgeweb.api.schemas.text import NonBlankText, StorableInput, Text
from knowledgeweb.bindings.choices import BindingTool
from knowledgeweb.providers.errors import ProviderErrorCode
from knowledgeweb.providers.registry import all_query_modes, provider_specs

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


class DatasetSelectionIn(StorableInput):
    dataset_id: Text = Field(min_length=1, max_length=256)
    document_ids: list[Text] = Field(
        default_factory=list, description="Empty: the whole dataset. At most 1000 documents in all."
    )


class ScopeSelectionIn(StorableInput):
    datasets: list[DatasetSelectionIn] = Field(min_length=1)


class SearchIn(StorableInput):
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
