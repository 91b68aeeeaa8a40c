"""One text module: the extractive composer and the passages read sentences and words alike.

``knowledgeweb.knowledge.text`` holds the sentence splitter, the stop list and the
stemmer; ``answers/text.py`` adds only Markdown handling and question framing, and
``knowledge/passages.py`` only closeness and label checks. These tests fail when
either grows a rule of its own again.
"""

from __future__ import annotations

import ast
from pathlib import Path

from knowledgeweb.answers import questions
from knowledgeweb.answers.text import sentences as answer_sentences
from knowledgeweb.knowledge import text
from knowledgeweb.knowledge.text import STOP_WORDS, sentence_words, sentences, stem

ROOT = Path(__file__).resolve().parents[2]
READERS = (
    "knowledgeweb/answers/text.py",
    "knowledgeweb/answers/questions.py",
    "knowledgeweb/knowledge/passages.py",
)


def _defined_names(path: str) -> set[str]:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(target.id for target in targets if isinstance(target, ast.Name))
    return names


def test_no_reader_defines_its_own_stemmer_stop_list_or_splitter() -> None:
    for path in READERS:
        own = _defined_names(path) & {"stem", "STOP_WORDS", "excerpt_segments", "_SENTENCE_END", "_BOUNDARY"}
        assert not own, f"{path} defines {sorted(own)}: those rules live in knowledge/text.py"


def test_the_composer_uses_the_shared_stemmer_and_stop_list() -> None:
    assert questions.stem is text.stem
    assert questions.STOP_WORDS is text.STOP_WORDS


def test_composer_and_passages_split_plain_prose_at_the_same_places() -> None:
    prose = (
        "Dr. Ada Byron met Mr. Babbage in 1833. The engine was never built, e.g. for lack of money! "
        "Was it a failure? Historians disagree."
    )

    assert answer_sentences(prose) == sentences(prose)
    assert sentences(prose) == [
        "Dr. Ada Byron met Mr. Babbage in 1833.",
        "The engine was never built, e.g. for lack of money!",
        "Was it a failure?",
        "Historians disagree.",
    ]


def test_the_composer_still_reads_markdown_blocks_as_prose() -> None:
    markdown = "# Engines\n\n- The engine was never built.\n- It was designed in 1837.\n\nShort title line\n"

    # The heading and the short unterminated line are not prose; list markers go.
    assert answer_sentences(markdown) == ["The engine was never built.", "It was designed in 1837."]


def test_words_that_carry_a_question_are_not_stop_words() -> None:
    # Leaving these out would let "What does LightRAG charge per query?" or "How many
    # citations can one answer hold?" be answered by a sentence that says nothing of them.
    assert {"against", "one", "per"}.isdisjoint(STOP_WORDS)
    assert {"the", "of", "which", "would"} <= STOP_WORDS


def test_both_readers_compare_the_same_stems() -> None:
    assert sentence_words("Citations resolved against earlier messages") == frozenset(
        {stem("citations"), stem("resolved"), "against", stem("earlier"), stem("messages")}
    )
    assert questions.term("resolves") == questions.term("resolved") == stem("resolve")


def test_the_text_caches_can_be_emptied_as_a_fresh_process_starts() -> None:
    text.excerpt_segments("One sentence here. And another one.")
    sentence_words("Otters hold hands while sleeping.")
    assert text._split_cached.cache_info().currsize > 0
    assert sentence_words.cache_info().currsize > 0

    text.text_caches_clear()

    assert text._split_cached.cache_info().currsize == 0
    assert sentence_words.cache_info().currsize == 0
