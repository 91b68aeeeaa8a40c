"""The migration that adds ``Chunk.text_digest`` fills it in for every existing chunk, batch by batch,
and leaves the full-text index working (SQLite rebuilds the table and loses its triggers)."""

from __future__ import annotations

import hashlib
import importlib

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from knowledgeweb.library.models import Chunk
from knowledgeweb.library.selectors import chunk_search, passage_locate
from knowledgeweb.library.services import ChunkDraft, collection_get_or_create, document_ingest

BEFORE = [("library", "0002_chunk_full_text")]
AFTER = [("library", "0004_chunk_text_digest_required")]
TEXTS = [f"Existing chunk number {n}, about lighthouses." for n in range(1, 6)] + [
    "Unicode é 字 \u2028 line."
]


@pytest.mark.django_db(transaction=True)
def test_existing_chunks_get_their_digest_and_stay_searchable(monkeypatch: pytest.MonkeyPatch) -> None:
    backfill = importlib.import_module("knowledgeweb.library.migrations.0003_chunk_text_digest")
    # Smaller than the number of chunks, so the backfill takes several batches.
    monkeypatch.setattr(backfill, "BATCH_SIZE", 2)
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old_apps = executor.loader.project_state(BEFORE).apps
    collection = old_apps.get_model("library", "Collection").objects.create(name="old")
    document = old_apps.get_model("library", "Document").objects.create(
        collection=collection, title="Old", source_key="old.md", content_hash="0" * 64
    )
    old_chunks = old_apps.get_model("library", "Chunk")
    for ordinal, text in enumerate(TEXTS, start=1):
        old_chunks.objects.create(document=document, ordinal=ordinal, text=text)

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)

    rows = list(Chunk.objects.order_by("ordinal").values_list("text", "text_digest"))
    assert [text for text, _ in rows] == TEXTS
    assert [digest for _, digest in rows] == [hashlib.sha256(t.encode()).hexdigest() for t in TEXTS]
    assert passage_locate(collection_name="old", excerpt=TEXTS[2]) == Chunk.objects.get(ordinal=3)
    # The index still holds the old chunks and, through its triggers, follows new writes.
    assert len(chunk_search(query="lighthouses", limit=10)) == 5
    document_ingest(
        collection=collection_get_or_create(name="new"),
        source_key="new.md",
        content_hash="1",
        title="New",
        source_url="",
        chunks=[ChunkDraft("A new chunk about lighthouses.")],
    )
    assert len(chunk_search(query="lighthouses", limit=10)) == 6
    Chunk.objects.filter(document__collection__name="old").delete()
    assert [hit.text for hit in chunk_search(query="lighthouses", limit=10)] == [
        "A new chunk about lighthouses."
    ]

    # Undone and redone, the index still works.
    executor.loader.build_graph()
    executor.migrate(BEFORE)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert [hit.text for hit in chunk_search(query="lighthouses", limit=10)] == [
        "A new chunk about lighthouses."
    ]
    assert Chunk.objects.get().text_digest == hashlib.sha256(b"A new chunk about lighthouses.").hexdigest()
