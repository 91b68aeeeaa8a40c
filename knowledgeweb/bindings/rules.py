"""Every rule a binding must satisfy (docs/providers.md#bindings), as plain checks.

The model's ``clean()`` turns these into admin errors on save, and the retrieval
service runs them again at use, so a binding edited directly in the database is
still refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from knowledgeweb.bindings.choices import REMOTE_PROVIDERS, BindingProvider, BindingScope, BindingTool
from knowledgeweb.providers.credentials import key_env_problem
from knowledgeweb.providers.lightrag import QUERY_MODES, TOOL_MODES
from knowledgeweb.providers.ragflow.scope import DatasetSelection, selection_problems

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
MAX_AGENT_NAME = 100
TOP_K_RANGE = (1, 100)
TIMEOUT_RANGE = (1, 120)
#: A local collection's primary key, as stored in a local binding's selection.
LOCAL_COLLECTION_ID = re.compile(r"[1-9][0-9]{0,18}")


def timeout_ceiling() -> int:
    """The most seconds a binding's timeout (one deadline per search) may be: KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING."""
    return int(min(TIMEOUT_RANGE[1], settings.KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING))


Problems = dict[str, list[str]]


def selection_from_json(value: Any) -> tuple[DatasetSelection, ...]:
    """Read a stored selection: ``[{"dataset_id": ..., "document_ids": [...]}, ...]``.

    Raises ``ValueError`` with a readable message for any other shape.
    """
    if not isinstance(value, list):
        raise ValueError("The selection must be a list of datasets.")
    selection: list[DatasetSelection] = []
    for item in value:
        if not isinstance(item, dict) or set(item) - {"dataset_id", "document_ids"}:
            raise ValueError('Each selected dataset must be {"dataset_id": ..., "document_ids": [...]}.')
        dataset_id, document_ids = item.get("dataset_id"), item.get("document_ids", [])
        if not isinstance(dataset_id, str):
            raise ValueError("Each selected dataset needs a dataset_id string.")
        if not isinstance(document_ids, list) or not all(isinstance(d, str) for d in document_ids):
            raise ValueError(f"The document ids of dataset {dataset_id} must be a list of strings.")
        selection.append(DatasetSelection(dataset_id=dataset_id, document_ids=tuple(document_ids)))
    return tuple(selection)


def selection_to_json(selection: Iterable[DatasetSelection]) -> list[dict[str, Any]]:
    return [{"dataset_id": s.dataset_id, "document_ids": list(s.document_ids)} for s in selection]


def binding_problems(
    *,
    name: str,
    provider: str,
    base_url: str,
    api_key_env: str,
    agent_names: Any,
    tools: Any,
    top_k: Any,
    timeout: Any,
    scope: str,
    selection: Any,
    query_modes: Any = (),
    default_mode: Any = "",
) -> Problems:
    """Everything wrong with a binding, keyed by field; empty when it is valid."""
    problems: Problems = {}

    def add(field: str, message: str) -> None:
        problems.setdefault(field, []).append(message)

    if not NAME_PATTERN.fullmatch(name or ""):
        add("name", "Use 1-100 letters, digits, '.', '_' or '-', starting with a letter or digit.")
    if provider not in BindingProvider.values:
        add("provider", f"Choose one of: {', '.join(BindingProvider.values)}.")
    remote = provider in REMOTE_PROVIDERS
    label = BindingProvider(provider).label if provider in BindingProvider.values else provider
    _check_connection(add, remote=remote, label=label, base_url=base_url, api_key_env=api_key_env)
    _check_agent_names(add, agent_names)
    _check_tools(add, provider=provider, label=label, tools=tools)
    _check_range(add, "top_k", top_k, TOP_K_RANGE, "results")
    _check_timeout(add, timeout)
    _check_scope(add, provider=provider, label=label, scope=scope, selection=selection)
    _check_modes(add, provider=provider, label=label, tools=tools, modes=query_modes, default=default_mode)
    return problems


def _check_connection(add: Any, *, remote: bool, label: str, base_url: str, api_key_env: str) -> None:
    if remote:
        if not base_url:
            add("base_url", f"{label} needs a base URL (http:// or https://).")
        else:
            url_problem = _url_problem(base_url)
            if url_problem:
                add("base_url", url_problem)
        if not api_key_env:
            add("api_key_env", f"{label} needs the name of the environment variable that holds its API key.")
        else:
            key_problem = key_env_problem(api_key_env)
            if key_problem:
                add("api_key_env", key_problem)
    else:
        if base_url:
            add("base_url", "The local index is built in; leave the base URL empty.")
        if api_key_env:
            add("api_key_env", "The local index needs no credential; leave this empty.")


def _url_problem(base_url: str) -> str | None:
    try:
        parts = urlsplit(base_url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError for a malformed port
    except ValueError:
        return "Enter a valid http:// or https:// URL."
    if parts.scheme not in {"http", "https"} or not host:
        return "Enter a valid http:// or https:// URL."
    if parts.username or parts.password:
        return "Do not put credentials in the URL; name an environment variable in 'API key env' instead."
    if parts.query or parts.fragment:
        return "The base URL must not have a query string or fragment."
    if len(base_url) > 2048:
        return "The base URL must be at most 2048 characters."
    return None


def _check_agent_names(add: Any, agent_names: Any) -> None:
    if not isinstance(agent_names, list) or not all(isinstance(n, str) for n in agent_names):
        add("agent_names", "Agent names must be a list of names.")
        return
    seen: set[str] = set()
    for agent_name in agent_names:
        if not agent_name.strip() or agent_name != agent_name.strip():
            add("agent_names", f"Agent name {agent_name!r} is blank or has surrounding spaces.")
        elif len(agent_name) > MAX_AGENT_NAME:
            add("agent_names", f"Agent name {agent_name[:20]!r}… is longer than {MAX_AGENT_NAME} characters.")
        elif agent_name in seen:
            add("agent_names", f"Agent name {agent_name!r} is listed twice.")
        seen.add(agent_name)


def _check_tools(add: Any, *, provider: str, label: str, tools: Any) -> None:
    if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
        add("tools", "Tools must be a list of tool names.")
        return
    if not tools:
        add("tools", "Enable at least one tool.")
    unknown = [t for t in tools if t not in BindingTool.values]
    if unknown:
        add("tools", f"Unknown tool(s): {', '.join(unknown)}.")
    if len(set(tools)) != len(tools):
        add("tools", "A tool is listed twice.")
    if BindingTool.ENTITY_RELATIONS_SEARCH in tools and provider != BindingProvider.LIGHTRAG:
        add("tools", f"entity_relations_search is offered only by LightRAG, not by {label}.")


def _check_range(add: Any, field: str, value: Any, bounds: tuple[int, int], unit: str) -> None:
    low, high = bounds
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        add(field, f"Enter a whole number from {low} to {high} {unit}.")


def _check_timeout(add: Any, timeout: Any) -> None:
    ceiling = timeout_ceiling()
    if (
        not isinstance(timeout, int)
        or isinstance(timeout, bool)
        or not TIMEOUT_RANGE[0] <= timeout <= ceiling
    ):
        add(
            "timeout",
            f"Enter a whole number from {TIMEOUT_RANGE[0]} to {ceiling} seconds: the timeout bounds a whole "
            f"search, and KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING allows at most {ceiling}.",
        )


def _check_modes(add: Any, *, provider: str, label: str, tools: Any, modes: Any, default: Any) -> None:
    if modes is None:
        modes = []
    if not isinstance(modes, list | tuple) or not all(isinstance(m, str) for m in modes):
        add("query_modes", "Query modes must be a list of mode names.")
        return
    if not isinstance(default, str):
        add("default_mode", "The default mode must be a mode name or empty.")
        return
    if provider != BindingProvider.LIGHTRAG:
        if modes:
            add("query_modes", f"Query modes are LightRAG's; {label} has none, so leave them empty.")
        if default:
            add("default_mode", f"Query modes are LightRAG's; {label} has none, so leave this empty.")
        return
    allowed = ", ".join(QUERY_MODES)
    unknown = [m for m in modes if m not in QUERY_MODES]
    if unknown:
        add(
            "query_modes",
            f"Unknown mode(s): {', '.join(unknown)}. Choose from {allowed} (bypass retrieves nothing, "
            "so it yields no evidence and is not offered).",
        )
    if len(set(modes)) != len(modes):
        add("query_modes", "A mode is listed twice.")
    if not default:
        return
    if default not in QUERY_MODES:
        add(
            "default_mode",
            f"Choose one of {allowed}, or leave it empty for mix (documents) and hybrid (relations).",
        )
    elif modes and default not in modes:
        add("default_mode", f"The default mode {default} must be one of the allowed query modes.")
    elif (
        isinstance(tools, list)
        and BindingTool.ENTITY_RELATIONS_SEARCH in tools
        and default not in TOOL_MODES[BindingTool.ENTITY_RELATIONS_SEARCH]
    ):
        add(
            "default_mode",
            f"{default} retrieves no entities or relations, so it cannot be the default of a binding "
            "offering entity_relations_search; choose another or leave it empty.",
        )


def _check_scope(add: Any, *, provider: str, label: str, scope: str, selection: Any) -> None:
    if scope not in BindingScope.values:
        add("scope", f"Choose one of: {', '.join(BindingScope.values)}.")
        return
    try:
        items = selection_from_json(selection)
    except ValueError as exc:
        add("selection", str(exc))
        return
    if scope != BindingScope.SELECTED:
        if items:
            add(
                "selection",
                "A selection is used only with the scope 'selected'; clear it or change the scope.",
            )
        return
    if provider == BindingProvider.LOCAL:
        for problem in local_selection_problems(items):
            add("selection", problem)
        return
    if provider != BindingProvider.RAGFLOW:
        add(
            "scope",
            f"{label} accepts only the scopes 'all' and 'disabled'; selection is for RAGFlow datasets and "
            "documents and for local collections.",
        )
        return
    for problem in selection_problems(items):
        add("selection", problem)


def local_selection_problems(items: tuple[DatasetSelection, ...]) -> list[str]:
    """A local binding selects whole collections by id: ``[{"dataset_id": "<collection id>"}, ...]``.

    Ids, not names: renaming a collection keeps its readers, and a collection deleted
    and created again under the same name is not opened to the old binding's users.
    """
    if not items:
        return ["Select at least one collection."]
    problems: list[str] = []
    seen: set[str] = set()
    for item in items:
        if not LOCAL_COLLECTION_ID.fullmatch(item.dataset_id):
            problems.append(f"{item.dataset_id[:40]!r} is not a collection id.")
        elif item.dataset_id in seen:
            problems.append(f"Collection {item.dataset_id} is selected more than once.")
        if item.document_ids:
            problems.append("The local index selects whole collections, not single documents.")
        seen.add(item.dataset_id)
    return problems


def local_collection_ids(selection: Any) -> frozenset[int] | None:
    """The collection ids a local binding's stored selection names (``None``: unreadable)."""
    try:
        items = selection_from_json(selection)
    except ValueError:
        return None
    if local_selection_problems(items):
        return None
    return frozenset(int(item.dataset_id) for item in items)
