"""The admin lists collections and documents, and shows a document's chunks read-only."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.library.models import Chunk
from knowledgeweb.library.services import ChunkDraft, collection_get_or_create, document_ingest

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client() -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("root", password="root-password-1"))
    return client


def test_admin_pages_list_collections_documents_and_chunks(admin_client: Client) -> None:
    result = document_ingest(
        collection=collection_get_or_create(name="Manuals"),
        source_key="guide.pdf",
        content_hash="h",
        title="Guide",
        source_url="https://example.org/guide",
        chunks=[ChunkDraft("First page text.", page=1), ChunkDraft("Second page text.", page=2)],
    )

    collections = admin_client.get("/admin/library/collection/").content.decode()
    documents = admin_client.get("/admin/library/document/").content.decode()
    detail = admin_client.get(f"/admin/library/document/{result.document.pk}/change/")

    assert "Manuals" in collections
    assert "Guide" in documents
    assert detail.status_code == 200
    assert "Second page text." in detail.content.decode()


def test_deleting_a_collection_in_the_admin_removes_its_chunks_from_search(admin_client: Client) -> None:
    from knowledgeweb.library.selectors import chunk_search

    collection = collection_get_or_create(name="Old")
    document_ingest(
        collection=collection,
        source_key="a",
        content_hash="h",
        title="A",
        source_url="",
        chunks=[ChunkDraft("Obsolete ferrets.")],
    )

    response = admin_client.post(f"/admin/library/collection/{collection.pk}/delete/", {"post": "yes"})

    assert response.status_code == 302
    assert Chunk.objects.count() == 0
    assert chunk_search(query="ferrets", limit=5) == []
