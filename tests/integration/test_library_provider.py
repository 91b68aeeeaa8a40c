"""The ``local`` provider: docs/providers.md's rules for title, dataset, url and page."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledgeweb.knowledge import RetrievalProvider, format_result, read_sources
from knowledgeweb.library.models import Document
from knowledgeweb.library.provider import LocalProvider
from knowledgeweb.library.services import ChunkDraft, collection_get_or_create, document_ingest, paths_ingest
from knowledgeweb.providers.errors import ProviderError, UnsupportedToolError
from tests.pdf_writer import pdf_bytes

pytestmark = pytest.mark.django_db


def _document(
    title: str, text: str, *, url: str = "", page: int | None = None, collection: str = "docs"
) -> None:
    document_ingest(
        collection=collection_get_or_create(name=collection),
        source_key=title,
        content_hash=title,
        title=title,
        source_url=url,
        chunks=[ChunkDraft(text, page=page)],
    )


def test_it_implements_the_retrieval_provider_protocol() -> None:
    provider = LocalProvider()

    assert isinstance(provider, RetrievalProvider)
    [capability] = provider.capabilities()
    assert (capability.provider, capability.tool, capability.operations) == (
        "local",
        "knowledge_search",
        ("search", "sources"),
    )


def test_hits_carry_the_document_title_and_the_collection_as_dataset() -> None:
    _document("Field notes", "Owls hunt at night.", collection="Birds")

    [hit] = LocalProvider().search("owls").hits

    assert (hit.title, hit.dataset_name, hit.text, hit.kind) == (
        "Field notes",
        "Birds",
        "Owls hunt at night.",
        "document",
    )
    assert hit.url is None
    assert hit.page is None


def test_only_an_http_or_https_source_url_becomes_a_url() -> None:
    _document("Web page", "Herons wade in shallow water.", url="https://example.org/herons")
    _document("Plain file", "Herons nest in colonies.")
    # A bad value written behind the services' back is still never shown as a URL.
    _document("Forged", "Herons eat fish.")
    Document.objects.filter(title="Forged").update(source_url="file:///etc/herons")

    urls = {hit.title: hit.url for hit in LocalProvider().search("herons").hits}

    assert urls == {"Web page": "https://example.org/herons", "Plain file": None, "Forged": None}


def test_pdf_chunks_carry_their_real_page_and_plain_files_none(tmp_path: Path) -> None:
    (tmp_path / "guide.pdf").write_bytes(
        pdf_bytes(
            [["Kestrels hover."], ["Nothing here."], ["Kestrels also perch on posts."]], title="Raptors"
        )
    )
    (tmp_path / "notes.md").write_text("# Notes\n\nKestrels are small falcons.\n", encoding="utf-8")
    paths_ingest(collection_name="docs", paths=[tmp_path], key_root=tmp_path)

    pages = sorted(((hit.title, hit.page) for hit in LocalProvider().search("kestrels").hits), key=str)

    assert pages == [("Notes", None), ("Raptors", 1), ("Raptors", 3)]


def test_top_k_limits_the_hits_and_the_constructor_sets_the_default() -> None:
    for number in range(5):
        _document(f"Swift {number}", f"Swifts fly fast, note {number}.")

    assert len(LocalProvider(top_k=3).search("swifts").hits) == 3
    assert len(LocalProvider(top_k=3).search("swifts", top_k=2).hits) == 2
    assert len(LocalProvider().search("swifts", top_k=500).hits) == 5


def test_it_can_be_limited_to_named_collections() -> None:
    _document("A", "Wrens sing loudly.", collection="one")
    _document("B", "Wrens are tiny.", collection="two")

    hits = LocalProvider(collection_names=["two"]).search("wrens").hits

    assert [hit.title for hit in hits] == ["B"]


def test_it_refuses_a_tool_it_does_not_offer() -> None:
    with pytest.raises(UnsupportedToolError, match="only the knowledge_search tool"):
        LocalProvider().search("owls", tool="entity_relations_search")


def test_a_question_with_no_search_terms_returns_no_hits() -> None:
    _document("Field notes", "Owls hunt at night.")

    result = LocalProvider().search("what is it?")

    assert (result.provider, result.query, result.hits) == ("local", "what is it?", ())


def test_a_database_failure_is_a_provider_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from django.db import DatabaseError

    def broken(**_: object) -> None:
        raise DatabaseError("disk I/O error")

    monkeypatch.setattr("knowledgeweb.library.provider.chunk_search", broken)

    with pytest.raises(ProviderError, match="local index could not be searched"):
        LocalProvider().search("owls")


def test_formatted_hits_are_valid_shared_evidence_with_page_and_url() -> None:
    _document("Guide", "Puffins dive for sand eels.", url="http://example.org/puffins", page=7)

    content, artifact = format_result(LocalProvider().search("puffins"))
    [evidence] = read_sources("knowledge_search", content, artifact).values()

    assert evidence.form == "shared"
    assert (evidence.provider, evidence.title, evidence.dataset_name) == ("local", "Guide", "docs")
    assert (evidence.url, evidence.page, evidence.excerpt) == (
        "http://example.org/puffins",
        7,
        "Puffins dive for sand eels.",
    )
