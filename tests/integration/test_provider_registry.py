"""A provider is a folder plus one registry line: a fake one, registered only here, works end to end.

The fake "shelf" provider is defined in this file and added to the registry with
``monkeypatch.setitem``; no generic module (bindings rules, retrieval scope, modes,
capabilities, service) is patched, so everything it does below is the generic
code reading the registry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.rules import binding_problems
from knowledgeweb.knowledge import KnowledgeCapabilities, RetrievalHit, RetrievalProvider, RetrievalResult
from knowledgeweb.providers import registry
from knowledgeweb.providers.selection import CheckedSelection, DatasetSelection
from knowledgeweb.providers.spec import ModeSpec, ProviderRequest, ProviderSpec
from knowledgeweb.retrieval import RetrievalInvalidError, retrieval_capabilities, retrieval_search
from knowledgeweb.threads.models import Message, Thread

pytestmark = pytest.mark.django_db

KEY_ENV = "KNOWLEDGEWEB_KEY_SHELF"
CAPABILITIES = (KnowledgeCapabilities(provider="shelf", tool="knowledge_search"),)
BOOKS = {
    "shelf-1": RetrievalHit(text="Synthetic: anvils are heavy.", title="Anvils", dataset_name="shelf-1"),
    "shelf-2": RetrievalHit(text="Synthetic: rockets are fast.", title="Rockets", dataset_name="shelf-2"),
}


@dataclass
class Shelf:
    """Records what the generic code asked of the fake provider."""

    built: list[ProviderRequest] = field(default_factory=list)
    checked: list[tuple[str, ...]] = field(default_factory=list)

    def selection_problems(self, selection: tuple[DatasetSelection, ...]) -> list[str]:
        self.checked.append(tuple(item.dataset_id for item in selection))
        return [f"{item.dataset_id!r} is not a shelf." for item in selection if item.dataset_id not in BOOKS]

    def factory(self, binding: Any, request: ProviderRequest) -> RetrievalProvider:
        self.built.append(request)
        return ShelfProvider(request.selection)


class ShelfProvider:
    def __init__(self, selection: Sequence[DatasetSelection] | None) -> None:
        self.shelves = list(BOOKS) if selection is None else [item.dataset_id for item in selection]

    def capabilities(self) -> Sequence[KnowledgeCapabilities]:
        return CAPABILITIES

    def search(self, query: str, *, tool: str = "knowledge_search", top_k: int = 20) -> RetrievalResult:
        hits = tuple(BOOKS[shelf] for shelf in self.shelves)[:top_k]
        return RetrievalResult(provider="shelf", query=query, tool=tool, hits=hits)


@pytest.fixture
def shelf(monkeypatch: pytest.MonkeyPatch) -> Shelf:
    recorder = Shelf()
    spec = ProviderSpec(
        name="shelf",
        label="Shelf",
        remote=True,
        tools=("knowledge_search",),
        capabilities=lambda: CAPABILITIES,
        factory=recorder.factory,
        selection_problems=recorder.selection_problems,
        selection_noun="shelves",
        narrowable=True,
        modes=ModeSpec(
            query_modes=("quick", "deep"),
            tool_modes={"knowledge_search": ("quick", "deep")},
            default_modes={"knowledge_search": "quick"},
        ),
    )
    # The one registry line, made here instead of in providers/registry.py.
    monkeypatch.setitem(registry.PROVIDERS, "shelf", spec)
    monkeypatch.setenv(KEY_ENV, "shelf-secret")
    return recorder


@pytest.fixture
def user() -> User:
    return User.objects.create_user("reader", password="pw-unused-123")


def shelf_binding(user: User, **fields: Any) -> KnowledgeBinding:
    values: dict[str, Any] = {
        "name": "shelf-main",
        "provider": "shelf",
        "base_url": "https://shelf.invalid",
        "api_key_env": KEY_ENV,
        "tools": ["knowledge_search"],
        "scope": "selected",
        "selection": [{"dataset_id": "shelf-1", "document_ids": []}, {"dataset_id": "shelf-2"}],
        "query_modes": ["deep"],
        **fields,
    }
    binding = KnowledgeBinding(**values)
    binding.clean()  # the model's rules, as the admin runs them on save
    binding.save()
    binding.users.add(user)
    return binding


def test_a_binding_of_a_registered_provider_validates_by_its_own_rules(shelf: Shelf, user: User) -> None:
    binding = shelf_binding(user)
    assert binding_problems(**binding.rule_fields()) == {}
    bad = {**binding.rule_fields(), "selection": [{"dataset_id": "attic"}], "default_mode": "slow"}
    problems = binding_problems(**bad)
    assert problems["selection"] == ["'attic' is not a shelf."]
    assert problems["default_mode"] == [
        "Choose one of quick, deep, or leave it empty for the provider's default."
    ]
    # Remote, so a base URL and a key variable are required, in the provider's own words.
    problems = binding_problems(**{**binding.rule_fields(), "base_url": "", "api_key_env": ""})
    assert problems["base_url"] == ["Shelf needs a base URL (http:// or https://)."]
    assert KnowledgeBinding.objects.filter(selection=[{"dataset_id": "attic"}]).count() == 0


def test_a_registered_provider_is_a_choice_of_the_binding_without_a_migration(shelf: Shelf) -> None:
    # The field's choices are read from the registry when used (bindings.choices.provider_choices).
    field = KnowledgeBinding._meta.get_field("provider")
    assert ("shelf", "Shelf") in list(field.choices or ())
    KnowledgeBinding(name="shelf-choice", provider="shelf").clean_fields(
        exclude=[f.name for f in KnowledgeBinding._meta.fields if f.name != "provider"]
    )
    with pytest.raises(ValidationError, match="is not a valid choice"):
        KnowledgeBinding(name="attic", provider="attic").clean_fields(
            exclude=[f.name for f in KnowledgeBinding._meta.fields if f.name != "provider"]
        )


def test_a_registered_provider_is_offered_by_capabilities(shelf: Shelf, user: User) -> None:
    shelf_binding(user)
    [offered] = retrieval_capabilities(user=user, agent_name="")
    assert (offered.binding, offered.provider, offered.tool, offered.scope) == (
        "shelf-main",
        "shelf",
        "knowledge_search",
        "selected",
    )
    assert (offered.query_modes, offered.default_mode) == (("quick", "deep"), "quick")
    assert shelf.built == []  # offering builds no adapter


def test_a_registered_provider_searches_through_the_retrieval_service(shelf: Shelf, user: User) -> None:
    shelf_binding(user)
    thread = Thread.objects.create(owner=user, title="Shelf")
    shelf.checked.clear()  # saving the binding checked its selection; count only the search's checks
    outcome = retrieval_search(
        user=user,
        tool="knowledge_search",
        query="what is heavy?",
        scope=[DatasetSelection("shelf-1")],
        mode="deep",
        thread_id=thread.id,
    )
    assert outcome.status == "success"
    assert outcome.provider == "shelf"
    assert "Synthetic: anvils are heavy." in outcome.content
    assert "rockets" not in outcome.content
    [request] = shelf.built
    assert isinstance(request.selection, CheckedSelection)
    assert (request.api_key, request.mode, list(request.selection)) == (
        "shelf-secret",
        "deep",
        [DatasetSelection("shelf-1")],
    )
    # Each selection checked once in this search: the configured one by the rules, the requested one.
    assert shelf.checked == [("shelf-1", "shelf-2"), ("shelf-1",)]
    assert Message.objects.filter(thread=thread).count() == 1


def test_a_registered_provider_refuses_a_wider_or_invalid_scope_before_building(
    shelf: Shelf, user: User
) -> None:
    shelf_binding(user, selection=[{"dataset_id": "shelf-1"}])
    thread = Thread.objects.create(owner=user, title="Shelf")
    with pytest.raises(RetrievalInvalidError) as caught:
        retrieval_search(
            user=user,
            tool="knowledge_search",
            query="q",
            scope=[DatasetSelection("attic")],
            thread_id=thread.id,
        )
    assert caught.value.code == "invalid_scope"
    assert str(caught.value) == "The requested scope was rejected: 'attic' is not a shelf."
    assert shelf.built == []
    assert Message.objects.filter(thread=thread).count() == 0
