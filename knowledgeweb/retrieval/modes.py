"""Which query mode a search runs in (docs/decisions/0011-lightrag-query-modes.md).

A provider with query modes (its ``ProviderSpec.modes``; today LightRAG) lets a
binding list the modes a search may pick (``query_modes``) and name a default
(``default_mode``). A search may name one of them; its binding's default is
always allowed. Without a binding default, each tool uses the provider's default
(LightRAG: ``mix`` for documents, ``hybrid`` for entity relations). A tool that
cannot run in a mode (LightRAG's ``naive`` returns no graph) never runs in it.
Other providers have no modes: naming one is refused. Every refusal happens
before any request.
"""

from __future__ import annotations

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.providers.registry import mode_provider_labels, provider_label, provider_spec
from knowledgeweb.providers.spec import ModeSpec
from knowledgeweb.retrieval.errors import RetrievalModeError


def _modes(binding: KnowledgeBinding) -> ModeSpec | None:
    spec = provider_spec(binding.provider)
    return spec.modes if spec is not None else None


def mode_default(binding: KnowledgeBinding, tool: str) -> str | None:
    """The mode a search of ``tool`` runs in when it names none; ``None`` for providers without modes."""
    modes = _modes(binding)
    if modes is None or tool not in modes.tool_modes:
        return None
    default = binding.default_mode
    return default if default in modes.tool_modes[tool] else modes.default_modes[tool]


def mode_choices(binding: KnowledgeBinding, tool: str) -> tuple[str, ...]:
    """The modes a search of ``tool`` may name through ``binding``, in the provider's order."""
    default = mode_default(binding, tool)
    modes = _modes(binding)
    if default is None or modes is None:
        return ()
    listed = binding.query_modes if isinstance(binding.query_modes, list) else []
    return tuple(mode for mode in modes.tool_modes[tool] if mode in listed or mode == default)


def mode_resolve(*, binding: KnowledgeBinding, tool: str, requested: str | None) -> str | None:
    """The mode this search runs in; raise ``RetrievalModeError`` (422) for one it may not use."""
    modes = _modes(binding)
    if modes is None:
        if requested is not None:
            label = provider_label(binding.provider)
            raise RetrievalModeError(
                f"Query modes are {mode_provider_labels()}'s; {label} binding '{binding.name}' takes none, "
                "so leave 'mode' out. Nothing was sent.",
                code="mode_not_supported",
            )
        return None
    if requested is None:
        return mode_default(binding, tool)
    choices = mode_choices(binding, tool)
    if requested in choices:
        return requested
    if requested in modes.query_modes and requested not in modes.tool_modes.get(tool, ()):
        reason = f"{tool} cannot run in mode '{requested}' (it retrieves no entities or relations)"
    else:
        reason = f"binding '{binding.name}' does not allow the mode '{requested}' for {tool}"
    raise RetrievalModeError(f"{reason}; choose one of: {', '.join(choices)}. Nothing was sent.")
