"""Factories for the rows most tests start from: users, tokens, bindings, collections with an
ingested corpus, and threads with recorded searches.

Each factory creates through the app's own services (``binding_create``, ``document_ingest``,
``token_create``, ``thread_create``, and ``record_search`` for a search recorded as the
retrieval service records it), so a factory-made row has passed the same rules as a real one.

    user = UserFactory.create()
    hr = CollectionFactory.create(name="hr", documents={"Salaries": "Quarterly salary bands."})
    BindingFactory.create(users=[user], collections=[hr])  # a local binding selecting hr
    raw = TokenFactory.create(user=user).raw  # the raw API token

(``.create()`` rather than calling the class: it is what factory_boy types as the model.)
    thread = ThreadFactory.create(owner=user, searches=[[RetrievalHit(text="...", title="a.md")]])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import factory
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.accounts.models import ApiToken
from knowledgeweb.accounts.services import token_create
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.knowledge import RetrievalHit
from knowledgeweb.library.models import Collection, Document
from knowledgeweb.library.services import ChunkDraft, collection_get_or_create, document_ingest
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.services import thread_create
from tests.searches import record_search

#: What a document's text may be given as: one chunk's text, or its chunks in order.
Texts = str | ChunkDraft | Sequence[str | ChunkDraft]


def chunk_drafts(texts: Texts) -> list[ChunkDraft]:
    items: Sequence[str | ChunkDraft] = [texts] if isinstance(texts, str | ChunkDraft) else texts
    return [item if isinstance(item, ChunkDraft) else ChunkDraft(item) for item in items]


class UserFactory(factory.django.DjangoModelFactory[User]):
    """A user with a usable password (``<username>-password-1``)."""

    class Meta:
        model = User
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")

    @classmethod
    def _create(cls, model_class: type[User], *args: Any, **kwargs: Any) -> User:
        kwargs.setdefault("password", f"{kwargs['username']}-password-1")
        return model_class.objects.create_user(*args, **kwargs)


def logged_in(user: User) -> Client:
    """A Django test client with ``user``'s session."""
    client = Client()
    client.force_login(user)
    return client


@dataclass(frozen=True)
class IssuedToken:
    """A token as ``token_create`` issues it: the stored row, and the raw value that exists only here."""

    token: ApiToken
    raw: str

    def client(self) -> Client:
        """A test client that authenticates every request with this token."""
        return Client(HTTP_AUTHORIZATION=f"Bearer {self.raw}")


class TokenFactory(factory.Factory[IssuedToken]):
    class Meta:
        model = IssuedToken

    user = factory.SubFactory(UserFactory)
    name = "tests"

    @classmethod
    def _create(cls, model_class: type[IssuedToken], *args: Any, **kwargs: Any) -> IssuedToken:
        token, raw = token_create(user=kwargs["user"], name=kwargs["name"])
        return model_class(token=token, raw=raw)


class BindingFactory(factory.django.DjangoModelFactory[KnowledgeBinding]):
    """A knowledge binding, by default the local index for ``knowledge_search``.

    ``collections=[...]`` makes a local binding select those collections (``scope`` "selected").
    """

    class Meta:
        model = KnowledgeBinding
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"local-{n}")
    provider = "local"
    tools = factory.LazyFunction(lambda: ["knowledge_search"])

    @classmethod
    def _create(cls, model_class: type[KnowledgeBinding], *args: Any, **kwargs: Any) -> KnowledgeBinding:
        collections: Iterable[Collection] = kwargs.pop("collections", ())
        selection = [{"dataset_id": str(collection.pk), "document_ids": []} for collection in collections]
        if selection:
            kwargs.update(scope="selected", selection=selection)
        return binding_create(**kwargs)


class DocumentFactory(factory.django.DjangoModelFactory[Document]):
    """A document ingested into a collection; ``texts`` gives its chunks (one text or several)."""

    class Meta:
        model = Document
        skip_postgeneration_save = True

    collection = factory.SubFactory("tests.factories.CollectionFactory")
    title = factory.Sequence(lambda n: f"Document {n}")
    source_key = factory.LazyAttribute(lambda document: document.title)
    content_hash = factory.LazyAttribute(lambda document: document.source_key)
    source_url = ""
    texts: Any = factory.LazyAttribute(lambda document: f"The text of {document.title}.")

    @classmethod
    def _create(cls, model_class: type[Document], *args: Any, **kwargs: Any) -> Document:
        texts = kwargs.pop("texts")
        return document_ingest(chunks=chunk_drafts(texts), **kwargs).document


def _ingest(collection: Collection, documents: Mapping[str, Texts]) -> None:
    for title, texts in documents.items():
        DocumentFactory.create(collection=collection, title=title, texts=texts)


class CollectionFactory(factory.django.DjangoModelFactory[Collection]):
    """A collection of the local index, with its corpus ingested: ``documents`` maps each title
    to its text (one chunk) or its chunks (texts or ``ChunkDraft``s, e.g. with a PDF page)."""

    class Meta:
        model = Collection
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"Collection {n}")

    @classmethod
    def _create(cls, model_class: type[Collection], *args: Any, **kwargs: Any) -> Collection:
        return collection_get_or_create(name=kwargs["name"])

    documents = factory.PostGeneration(
        lambda collection, create, documents, **_: _ingest(collection, documents or {})
    )


def _record(thread: Thread, searches: Sequence[Sequence[RetrievalHit]]) -> None:
    for hits in searches:
        record_search(thread, *hits)


class ThreadFactory(factory.django.DjangoModelFactory[Thread]):
    """A thread; ``searches=[hits, ...]`` records one search per list of ``RetrievalHit``s, as
    the retrieval service records it (``tests/searches.py``), in order."""

    class Meta:
        model = Thread
        skip_postgeneration_save = True

    owner = factory.SubFactory(UserFactory)
    title = "A thread"
    agent_name = "tester"

    @classmethod
    def _create(cls, model_class: type[Thread], *args: Any, **kwargs: Any) -> Thread:
        return thread_create(**kwargs)

    searches = factory.PostGeneration(lambda thread, create, searches, **_: _record(thread, searches or ()))
