"""Ranked full-text search over the local index.

These tests run on SQLite (FTS5) by default and again on PostgreSQL under
``make test`` (DATABASE_URL=postgres://...): every expectation here must hold on
both, which is what "the same search behaviour" means.
"""

from __future__ import annotations

import pytest
from django.db import connection

from knowledgeweb.library.models import Chunk, Document
from knowledgeweb.library.selectors import chunk_search
from knowledgeweb.library.services import ChunkDraft, collection_get_or_create, document_ingest

pytestmark = pytest.mark.django_db

CORPUS = {
    "Beekeeping basics": [
        "Honey bees live in hives. A beekeeper inspects each hive weekly for the queen and her brood.",
        "Bees make honey from nectar and store it in wax comb inside the hive.",
    ],
    "Volcanoes": ["A volcano erupts when magma rises through the crust. Lava flows cool into basalt."],
    "Bread baking": [
        "Bread needs flour, water, salt and yeast. Knead the dough and let it rise before baking."
    ],
    "Tides": ["Ocean tides rise and fall twice a day because of the gravity of the moon."],
}


def _ingest(corpus: dict[str, list[str]], *, collection: str = "science") -> dict[str, Document]:
    target = collection_get_or_create(name=collection)
    documents = {}
    for title, texts in corpus.items():
        result = document_ingest(
            collection=target,
            source_key=f"{title}.md",
            content_hash=title,
            title=title,
            source_url="",
            chunks=[ChunkDraft(text) for text in texts],
        )
        documents[title] = result.document
    return documents


def _titles(query: str, **kwargs: object) -> list[str]:
    return [hit.title for hit in chunk_search(query=query, limit=20, **kwargs)]  # type: ignore[arg-type]


def test_the_best_matching_document_ranks_first_for_a_natural_question() -> None:
    _ingest(CORPUS)

    assert _titles("How do bees make honey in a hive?")[:2] == ["Beekeeping basics", "Beekeeping basics"]
    assert _titles("What happens when magma erupts?")[0] == "Volcanoes"
    assert _titles("Why does the dough rise?")[0] == "Bread baking"


def test_a_rare_word_outweighs_a_common_one() -> None:
    _ingest(CORPUS)

    # "rise" is in three documents, "gravity" in one: the tide text must win although
    # the bread and volcano texts also match.
    titles = _titles("rise gravity")

    assert titles[0] == "Tides"
    assert set(titles) == {"Tides", "Bread baking", "Volcanoes"}


def test_words_match_their_inflections_on_both_databases() -> None:
    _ingest(CORPUS)

    # "rises" (volcano), "rise" (bread, tides): both stemmers reduce them alike.
    assert set(_titles("rising")) == {"Volcanoes", "Bread baking", "Tides"}
    assert set(_titles("hives")) == {"Beekeeping basics"}


def test_a_question_of_only_stop_words_finds_nothing() -> None:
    _ingest(CORPUS)

    assert _titles("What is it and why?") == []
    assert _titles("   ") == []


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ('bees" OR NEAR(lava', {"Beekeeping basics", "Volcanoes"}),
        ("honey*", {"Beekeeping basics"}),
        # A leading minus is not negation: bread is searched for, not excluded.
        ("-bread honey", {"Beekeeping basics", "Bread baking"}),
        ("title:honey", {"Beekeeping basics"}),
        ("bees AND NOT", {"Beekeeping basics"}),
        ("'); DROP TABLE library_chunk; --honey", {"Beekeeping basics"}),
        ("^honey", {"Beekeeping basics"}),
        ("honey & | ! <-> :*", {"Beekeeping basics"}),
    ],
)
def test_search_syntax_in_a_question_is_plain_text(query: str, expected: set[str]) -> None:
    _ingest(CORPUS)

    assert set(_titles(query)) == expected
    assert Chunk.objects.count() == 5


@pytest.mark.parametrize(
    "query",
    [
        "",
        '"',
        '""',
        "NEAR(",
        "NEAR(a b)",
        "*",
        "-",
        "OR",
        "AND NOT",
        "(",
        ")",
        ":",
        "^",
        "{}",
        "\\",
        "\x00",
        "'",
    ],
)
def test_a_question_of_only_search_syntax_finds_nothing_and_raises_nothing(query: str) -> None:
    _ingest(CORPUS)

    assert _titles(query) == []


UNICODE = {
    "Café": ["Le café crème de l'école."],
    "Tokyo": ["東京 is a city."],
    "Wisdom": ["Σοφία means wisdom."],
    "Emoji": ["Bees 🐝 love clover."],
}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("CAFÉ", ["Café"]),
        ("école", ["Café"]),
        # Diacritics are kept on both databases, so a bare letter is another word.
        ("ecole", []),
        ("東京", ["Tokyo"]),
        ("σοφία", ["Wisdom"]),
        ("🐝 clover", ["Emoji"]),
        ("\u200bclover", ["Emoji"]),
    ],
)
def test_unicode_questions_match_alike_on_both_databases(query: str, expected: list[str]) -> None:
    _ingest(UNICODE)

    assert _titles(query) == expected


def test_a_very_long_question_is_searched_by_its_first_distinct_words() -> None:
    _ingest(CORPUS)

    # Repeats collapse, over-long words are dropped, and the term list is capped.
    assert set(_titles("honey " * 20_000 + "x" * 100_000 + " magma")) == {"Beekeeping basics", "Volcanoes"}
    assert _titles(" ".join(f"filler{n}" for n in range(1000)) + " honey") == []


def test_the_index_follows_chunk_updates_and_deletes() -> None:
    documents = _ingest(CORPUS)
    chunk = Chunk.objects.get(document=documents["Tides"])

    chunk.text = "Glaciers carve valleys over thousands of years."
    chunk.save()
    assert _titles("tides ocean") == []
    assert _titles("glaciers") == ["Tides"]

    documents["Volcanoes"].delete()
    assert _titles("magma lava") == []
    assert Chunk.objects.count() == 4


def test_re_ingesting_replaces_what_the_index_finds() -> None:
    documents = _ingest(CORPUS)
    document_ingest(
        collection=documents["Tides"].collection,
        source_key="Tides.md",
        content_hash="changed",
        title="Tides",
        source_url="",
        chunks=[ChunkDraft("Spring tides follow the new moon.")],
    )

    assert _titles("ocean twice") == []
    assert _titles("spring") == ["Tides"]


def test_search_can_be_limited_to_collections() -> None:
    _ingest(CORPUS, collection="science")
    _ingest({"Honey cake": ["Honey cake needs honey, flour and eggs."]}, collection="recipes")

    assert set(_titles("honey")) == {"Beekeeping basics", "Honey cake"}
    assert _titles("honey", collection_names=["recipes"]) == ["Honey cake"]
    assert _titles("honey", collection_names=[]) == []


def test_the_limit_caps_the_number_of_hits() -> None:
    _ingest(CORPUS)

    assert len(chunk_search(query="rise bees honey magma", limit=2)) == 2


def test_scores_are_higher_for_better_hits() -> None:
    _ingest(CORPUS)

    hits = chunk_search(query="honey hive", limit=20)

    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
    assert all(hit.score > 0 for hit in hits)


def test_the_search_runs_on_this_databases_own_full_text_engine() -> None:
    _ingest(CORPUS)

    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT count(*) FROM library_chunk_fts WHERE library_chunk_fts MATCH 'honey'")
        else:
            cursor.execute(
                "SELECT count(*) FROM pg_indexes WHERE indexname = 'library_chunk_text_search' "
                "AND indexdef LIKE '%%gin%%to_tsvector%%'"
            )
        (count,) = cursor.fetchone()

    assert count >= 1
