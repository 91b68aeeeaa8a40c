"""The order of local index hits, ties included, and what one search costs in queries.

The SQLite backend orders the joined top rows itself (no second sort in SQL), so
these pin that order to the database's: best score first, equal scores by chunk
id, and a limit that cuts through equal scores keeps the lowest ids. They hold on
PostgreSQL too, whose query orders by ``rank DESC, c.id``.
"""

from __future__ import annotations

from typing import Any

import pytest

from knowledgeweb.knowledge import RetrievalHit, RetrievalResult
from knowledgeweb.library.models import Collection, Document
from knowledgeweb.library.provider import LocalProvider
from knowledgeweb.library.search import ChunkHit
from knowledgeweb.library.selectors import chunk_search
from knowledgeweb.library.services import ChunkDraft, collection_get_or_create, document_ingest

pytestmark = pytest.mark.django_db

SAME = "Owls hunt mice in the meadow at dusk."


def _document(title: str, texts: list[str], *, collection: str = "birds", url: str = "") -> None:
    document_ingest(
        collection=collection_get_or_create(name=collection),
        source_key=title,
        content_hash=title,
        title=title,
        source_url=url,
        chunks=[ChunkDraft(text) for text in texts],
    )


def _tied_corpus() -> None:
    # Three chunks that score alike, then a better one written last (the highest id).
    _document("First", [SAME])
    _document("Second", [SAME], collection="other birds")
    _document("Third", [SAME])
    _document("Best", ["Owls, owls: owls everywhere."])


def _by_score_then_id(hits: list[ChunkHit]) -> list[ChunkHit]:
    return sorted(hits, key=lambda hit: (-hit.score, hit.chunk_id))


@pytest.mark.parametrize("collections", [None, ["birds", "other birds"]])
def test_hits_are_best_first_and_equal_scores_go_by_chunk_id(collections: list[str] | None) -> None:
    _tied_corpus()

    hits = chunk_search(query="owls", limit=20, collection_names=collections)

    assert [hit.title for hit in hits] == ["Best", "First", "Second", "Third"]
    assert hits == _by_score_then_id(hits)
    assert len({hit.score for hit in hits[1:]}) == 1
    assert hits[0].chunk_id > hits[-1].chunk_id


@pytest.mark.parametrize("collections", [None, ["birds", "other birds"]])
def test_a_limit_through_equal_scores_keeps_the_lowest_chunk_ids(collections: list[str] | None) -> None:
    _tied_corpus()

    hits = chunk_search(query="owls", limit=3, collection_names=collections)

    assert [hit.title for hit in hits] == ["Best", "First", "Second"]


def test_a_hit_is_an_immutable_record_of_its_row() -> None:
    _tied_corpus()

    [hit] = chunk_search(query="owls", limit=1)

    assert (hit.title, hit.collection_name, hit.text, hit.page, hit.source_url) == (
        "Best",
        "birds",
        "Owls, owls: owls everywhere.",
        None,
        "",
    )
    assert isinstance(hit.score, float)
    assert hit.score > 0
    with pytest.raises(AttributeError):
        hit.title = "Renamed"  # type: ignore[misc]


def test_the_provider_result_is_the_one_its_hits_would_build(django_assert_num_queries: Any) -> None:
    _document("Guide", ["Puffins dive for sand eels."], url="https://example.org/puffins")
    _document("Notes", ["Puffins nest in burrows."])
    # A bad value written behind the services' back is still never a URL.
    Document.objects.filter(title="Notes").update(source_url="file:///etc/puffins")

    with django_assert_num_queries(1):
        result = LocalProvider().search("puffins")

    rows = chunk_search(query="puffins", limit=20)
    assert result == RetrievalResult(
        provider="local",
        query="puffins",
        tool="knowledge_search",
        hits=tuple(
            RetrievalHit(
                text=row.text,
                title=row.title,
                dataset_name=row.collection_name,
                url="https://example.org/puffins" if row.title == "Guide" else None,
                page=None,
                score=row.score,
            )
            for row in rows
        ),
    )
    assert all(type(hit) is RetrievalHit for hit in result.hits)


def test_a_search_of_selected_collections_costs_one_query_more(django_assert_num_queries: Any) -> None:
    _tied_corpus()
    selected = [Collection.objects.get(name="other birds").pk]

    with django_assert_num_queries(2):
        hits = LocalProvider(collection_ids=selected).search("owls").hits

    assert [hit.title for hit in hits] == ["Second"]
