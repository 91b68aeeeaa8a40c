"""Which LightRAG query mode a search runs in (docs/decisions.md, "LightRAG query modes").

A LightRAG binding lists the modes a search may pick (``query_modes``) and may name
a default (``default_mode``). A search may name one of them; its binding's
default is always allowed. Without a binding default, documents use ``mix`` and
entity relations ``hybrid``. ``naive`` returns no graph, so entity relations
never run in it. Other providers have no modes: naming one is refused.
Every refusal happens before any request.
"""

from __future__ import annotations

from knowledgeweb.bindings.choices import BindingProvider
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.providers.lightrag import DEFAULT_MODES, QUERY_MODES, TOOL_MODES
from knowledgeweb.retrieval.errors import RetrievalModeError


def mode_default(binding: KnowledgeBinding, tool: str) -> str | None:
    """The mode a search of ``tool`` runs in when it names none; ``None`` for other providers."""
    if binding.provider != BindingProvider.LIGHTRAG or tool not in TOOL_MODES:
        return None
    default = binding.default_mode
    return default if default in TOOL_MODES[tool] else DEFAULT_MODES[tool]


def mode_choices(binding: KnowledgeBinding, tool: str) -> tuple[str, ...]:
    """The modes a search of ``tool`` may name through ``binding``, in LightRAG's order."""
    default = mode_default(binding, tool)
    if default is None:
        return ()
    listed = binding.query_modes if isinstance(binding.query_modes, list) else []
    return tuple(mode for mode in TOOL_MODES[tool] if mode in listed or mode == default)


def mode_resolve(*, binding: KnowledgeBinding, tool: str, requested: str | None) -> str | None:
    """The mode this search runs in; raise ``RetrievalModeError`` (422) for one it may not use."""
    if binding.provider != BindingProvider.LIGHTRAG:
        if requested is not None:
            label = BindingProvider(binding.provider).label
            raise RetrievalModeError(
                f"Query modes are LightRAG's; {label} binding '{binding.name}' takes none, so leave "
                "'mode' out. Nothing was sent.",
                code="mode_not_supported",
            )
        return None
    if requested is None:
        return mode_default(binding, tool)
    choices = mode_choices(binding, tool)
    if requested in choices:
        return requested
    if requested in QUERY_MODES and requested not in TOOL_MODES.get(tool, ()):
        reason = f"{tool} cannot run in mode '{requested}' (it retrieves no entities or relations)"
    else:
        reason = f"binding '{binding.name}' does not allow the mode '{requested}' for {tool}"
    raise RetrievalModeError(f"{reason}; choose one of: {', '.join(choices)}. Nothing was sent.")
