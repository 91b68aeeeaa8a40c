"""Paragraph-boundary chunking with a size limit."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgeweb.library.chunking import chunk_text, paragraphs


def test_paragraphs_are_split_on_blank_lines_and_trimmed() -> None:
    text = "  First line\r\nsame paragraph   \n\n\n  \t\nSecond.\n \nThird.\n"

    assert paragraphs(text) == ["First line\nsame paragraph", "Second.", "Third."]


def test_short_paragraphs_are_packed_together_up_to_the_limit() -> None:
    assert chunk_text("aaaa\n\nbbbb\n\ncccc", limit=10) == ["aaaa\n\nbbbb", "cccc"]


def test_a_paragraph_is_never_split_when_it_fits() -> None:
    assert chunk_text("one two three.\n\nfour five six.", limit=15) == ["one two three.", "four five six."]


def test_a_long_paragraph_is_split_between_sentences() -> None:
    text = "First sentence here. Second sentence here. Third one."

    assert chunk_text(text, limit=45) == ["First sentence here. Second sentence here.", "Third one."]


def test_a_long_sentence_is_split_between_words_and_a_long_word_is_cut() -> None:
    assert chunk_text("alpha beta gamma delta", limit=11) == ["alpha beta", "gamma delta"]
    assert chunk_text("abcdefghijkl", limit=5) == ["abcde", "fghij", "kl"]


def test_blank_text_has_no_chunks() -> None:
    assert chunk_text(" \n\n \t ") == []


def test_the_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="limit must be positive"):
        chunk_text("text", limit=0)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.sampled_from("ab .!?\n"), min_size=0, max_size=120),
        min_size=0,
        max_size=12,
    ),
    st.integers(min_value=1, max_value=60),
)
def test_chunks_fit_the_limit_and_keep_every_word_in_order(blocks: list[str], limit: int) -> None:
    text = "\n\n".join(blocks)

    chunks = chunk_text(text, limit=limit)

    assert all(0 < len(chunk) <= limit for chunk in chunks)
    # Cutting over-long words may split them, so compare the characters, not the words.
    assert "".join("".join(chunks).split()) == "".join(text.split())
