"""Every rule a binding must satisfy (docs/providers.md#bindings), as plain checks.

The model's ``clean()`` turns these into admin errors on save, and the retrieval
service runs them again at use, so a binding edited directly in the database is
still refused.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from knowledgeweb.bindings.choices import BindingScope, BindingTool
from knowledgeweb.providers.connection_rules import agent_names_problems, name_problem, url_problem
from knowledgeweb.providers.credentials import key_env_problem
from knowledgeweb.providers.registry import mode_provider_labels, provider_spec, provider_specs
from knowledgeweb.providers.selection import selection_from_json
from knowledgeweb.providers.spec import ProviderSpec

TOP_K_RANGE = (1, 100)
TIMEOUT_RANGE = (1, 120)


def timeout_ceiling() -> int:
    """The most seconds a binding's timeout (one deadline per search) may be: KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING."""
    return int(min(TIMEOUT_RANGE[1], settings.KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING))


Problems = dict[str, list[str]]


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

    name_refusal = name_problem(name)
    if name_refusal:
        add("name", name_refusal)
    spec = provider_spec(provider)
    if spec is None:
        add("provider", f"Choose one of: {', '.join(s.name for s in provider_specs())}.")
    remote = spec is not None and spec.remote
    label = spec.label if spec is not None else provider
    _check_connection(add, remote=remote, label=label, base_url=base_url, api_key_env=api_key_env)
    for problem in agent_names_problems(agent_names):
        add("agent_names", problem)
    _check_tools(add, spec=spec, label=label, tools=tools)
    _check_range(add, "top_k", top_k, TOP_K_RANGE, "results")
    _check_timeout(add, timeout)
    _check_scope(add, spec=spec, label=label, scope=scope, selection=selection)
    _check_modes(add, spec=spec, label=label, tools=tools, modes=query_modes, default=default_mode)
    return problems


def _check_connection(add: Any, *, remote: bool, label: str, base_url: str, api_key_env: str) -> None:
    if remote:
        if not base_url:
            add("base_url", f"{label} needs a base URL (http:// or https://).")
        else:
            url_refusal = url_problem(base_url)
            if url_refusal:
                add("base_url", url_refusal)
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


def _check_tools(add: Any, *, spec: ProviderSpec | None, label: str, tools: Any) -> None:
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
    specs = provider_specs()
    for tool in dict.fromkeys(t for t in tools if t in BindingTool.values):
        offering = [s.label for s in specs if tool in s.tools]
        # A provider the registry does not know is told only about the tools some providers lack.
        offered = tool in spec.tools if spec is not None else len(offering) == len(specs)
        if not offered:
            add("tools", f"{tool} is offered only by {' and '.join(offering)}, not by {label}.")


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


def _check_modes(
    add: Any, *, spec: ProviderSpec | None, label: str, tools: Any, modes: Any, default: Any
) -> None:
    if modes is None:
        modes = []
    if not isinstance(modes, list | tuple) or not all(isinstance(m, str) for m in modes):
        add("query_modes", "Query modes must be a list of mode names.")
        return
    if not isinstance(default, str):
        add("default_mode", "The default mode must be a mode name or empty.")
        return
    mode_spec = spec.modes if spec is not None else None
    if mode_spec is None:
        owners = mode_provider_labels()
        if modes:
            add("query_modes", f"Query modes are {owners}'s; {label} has none, so leave them empty.")
        if default:
            add("default_mode", f"Query modes are {owners}'s; {label} has none, so leave this empty.")
        return
    query_modes, tool_modes = mode_spec.query_modes, mode_spec.tool_modes
    allowed = ", ".join(query_modes)
    unknown = [m for m in modes if m not in query_modes]
    if unknown:
        note = f" {mode_spec.unknown_note}" if mode_spec.unknown_note else ""
        add("query_modes", f"Unknown mode(s): {', '.join(unknown)}. Choose from {allowed}{note}.")
    if len(set(modes)) != len(modes):
        add("query_modes", "A mode is listed twice.")
    if not default:
        return
    if default not in query_modes:
        usual = mode_spec.usual_default or "the provider's default"
        add("default_mode", f"Choose one of {allowed}, or leave it empty for {usual}.")
    elif modes and default not in modes:
        add("default_mode", f"The default mode {default} must be one of the allowed query modes.")
    elif isinstance(tools, list):
        refusing = [t for t in tools if t in tool_modes and default not in tool_modes[t]]
        if refusing:
            add(
                "default_mode",
                f"{default} retrieves no entities or relations, so it cannot be the default of a binding "
                f"offering {refusing[0]}; choose another or leave it empty.",
            )


def _check_scope(add: Any, *, spec: ProviderSpec | None, label: str, scope: str, selection: Any) -> None:
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
    if spec is None or spec.selection_problems is None:
        nouns = " and for ".join(s.selection_noun for s in provider_specs() if s.selection_problems)
        add(
            "scope",
            f"{label} accepts only the scopes 'all' and 'disabled'; selection is for {nouns}.",
        )
        return
    for problem in spec.selection_problems(items):
        add("selection", problem)
