"""What the generic layers need to know about a provider: one ``ProviderSpec`` each.

Each provider's folder builds its own spec (``providers/<name>/spec.py``) and
``providers/registry.py`` lists them. The bindings rules, the admin form, the
retrieval service and the API read a provider's label, tools, scope rules,
query modes, capabilities and adapter from here, so none of them names a provider.
Nothing here imports Django, and nothing in this layer imports an app: what a
factory needs from above (the credential, the selection memory) arrives in the
``ProviderRequest``, and a provider that lives in an app (the local index)
registers its spec from that app's ``ready()`` (``providers/registry.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from knowledgeweb.knowledge import KnowledgeCapabilities, RetrievalProvider
from knowledgeweb.providers.memory import SelectionMemory
from knowledgeweb.providers.selection import DatasetSelection

SelectionProblems = Callable[[tuple[DatasetSelection, ...]], list[str]]


@dataclass(frozen=True)
class ProviderRequest:
    """What a factory needs beyond the binding: the credential read at use, the scope, the mode."""

    api_key: str | None
    selection: tuple[DatasetSelection, ...] | None
    #: Seconds for the whole search: the binding's timeout, never above the configured ceiling.
    timeout: float
    #: The query mode this search runs in (``None``: the adapter's default).
    mode: str | None = None
    #: Selections recently confirmed for this binding and credential, for an adapter that
    #: validates a selection before searching (``None``: validate every time).
    memory: SelectionMemory | None = None


#: Builds the adapter for one search from the binding (a ``KnowledgeBinding``) and the request.
ProviderFactory = Callable[[Any, ProviderRequest], RetrievalProvider]
#: The admin's "Test connection": one small real request through the provider's client; returns
#: what succeeded in words, raises a ``ProviderError`` otherwise.
ProviderProbe = Callable[[Any, ProviderRequest], str]


@dataclass(frozen=True)
class ModeSpec:
    """A provider's query modes: which exist, which each tool may run in, and the defaults."""

    #: Every mode a binding may allow, in the provider's own order.
    query_modes: tuple[str, ...]
    #: The modes each tool may run in; a tool missing here takes no mode.
    tool_modes: Mapping[str, tuple[str, ...]]
    #: The mode each tool runs in when neither the binding nor the search names one.
    default_modes: Mapping[str, str]
    #: Appended to the admin's "Unknown mode(s)" message, e.g. why a mode is not offered.
    unknown_note: str = ""
    #: The defaults in words, for "leave it empty for ...".
    usual_default: str = ""
    #: The label of the admin's empty default-mode choice.
    usual_choice: str = ""


@dataclass(frozen=True)
class ProviderSpec:
    """Everything provider-specific the generic code asks about."""

    #: The value stored in ``KnowledgeBinding.provider``.
    name: str
    #: What an admin and error messages call it.
    label: str
    #: Reached over HTTP: needs a base URL and the name of the variable holding its key.
    remote: bool
    #: The tools it offers.
    tools: tuple[str, ...]
    #: What each tool offers, without a credential or a request.
    capabilities: Callable[[], Sequence[KnowledgeCapabilities]]
    factory: ProviderFactory
    #: The rules of a configured ``selected`` scope; ``None``: it accepts only ``all`` and ``disabled``.
    selection_problems: SelectionProblems | None = None
    #: What a selection names, e.g. "RAGFlow datasets and documents" (for messages).
    selection_noun: str = ""
    #: A search may narrow the binding's scope with a selection (checked by ``selection_problems``).
    narrowable: bool = False
    modes: ModeSpec | None = None
    #: Extra admin form behaviour, a dotted path to a ``BindingFormHooks`` imported when the form is built.
    form_hooks: str | None = None
    #: The admin's connection test (remote providers); ``None``: nothing to connect to.
    probe: ProviderProbe | None = None
    #: Free for a provider's own notes; the generic code never reads it.
    extra: Mapping[str, Any] = field(default_factory=dict)
