"""What the thread search reads of an answer, and the snippet the list shows around a match."""

from __future__ import annotations

from knowledgeweb.knowledge.linkgrammar import parse_markdown
from knowledgeweb.threads.rendering.claims import answer_text
from knowledgeweb.web.snippets import snippet

HANDLE = "knowledge-source-" + "a" * 32


def test_an_answers_search_text_is_what_a_reader_sees() -> None:
    text = answer_text(
        parse_markdown(
            f"# Heading\n\nCats purr [citation:cats.md](#{HANDLE}) and [the guide](https://x.example/g) says so.\n\n"
            "| a | b |\n|---|---|\n| cell | `code` |\n\n```\nfenced block\n```\n"
        )
    )
    assert text.split("\n") == [
        "Heading",
        "Cats purr  and the guide says so.",
        "a",
        "b",
        "cell",
        "code",
        "fenced block",
    ]
    assert "citation" not in text
    assert "x.example" not in text
    assert HANDLE not in text


def test_a_message_shown_as_written_is_searched_as_written() -> None:
    raw = "[" * 2001 + " words"
    assert answer_text(parse_markdown(raw)) == raw


def test_a_snippet_cuts_at_words_and_marks_where_it_cut() -> None:
    words = " ".join(f"w{n}" for n in range(50))
    found = snippet(f"{words} Albatross {words}", "albatross")
    assert found is not None
    assert found.match == "Albatross"
    assert found.before.startswith("…w")
    assert found.after.endswith("…")
    assert len(found.before) <= 61
    assert len(found.after) <= 61


def test_a_short_text_is_shown_whole_and_a_missing_match_shows_nothing() -> None:
    found = snippet("The  albatross\nflies.", "ALBATROSS flies")
    assert found is not None
    assert (found.before, found.match, found.after) == ("The ", "albatross flies", ".")
    assert snippet("nothing here", "albatross") is None
    assert snippet("anything", "   ") is None
