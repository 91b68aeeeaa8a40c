"""The extractive composer answers plain questions whose answers share few words with them,
and still abstains when a sentence only repeats the question's names or lacks what it asks for."""

from __future__ import annotations

from typing import Any

import pytest

from knowledgeweb.answers import ExtractiveComposer
from knowledgeweb.answers.extractive import ABSTAIN
from knowledgeweb.answers.questions import read_question, term
from knowledgeweb.knowledge import RetrievalHit, RetrievalResult, format_result

TOOL = "knowledge_search"

ADDRESS = RetrievalHit(
    title="The Gettysburg Address",
    text="Abraham Lincoln, November 19, 1863. The text of the Bliss copy. "
    "Four score and seven years ago our fathers brought forth on this continent, a new nation.",
    dataset_name="docs",
)
INDEX = RetrievalHit(
    title="The local index",
    text="Documents are added with the ingest command. It reads Markdown, plain text, HTML and PDF files. "
    "Search results are ranked with bm25, and the question is treated as plain words. "
    "The viewer recomputes every source id and checks that the tool content contains the excerpt.",
    dataset_name="docs",
)


def _quotes(question: str, *hits: RetrievalHit) -> list[str]:
    content, artifact = format_result(RetrievalResult(provider="local", query="q", hits=hits))
    answer = ExtractiveComposer().compose(
        question=question, tool_name=TOOL, content=content, artifact=artifact
    )
    if answer == ABSTAIN:
        return []
    return [line[2:].split(" [citation:")[0] for line in answer.splitlines() if line.startswith("- ")]


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Who delivered the Gettysburg Address, and when?", "Abraham Lincoln, November 19, 1863."),
        ("When was the Gettysburg Address given?", "Abraham Lincoln, November 19, 1863."),
        ("Who gave the Gettysburg Address?", "Abraham Lincoln, November 19, 1863."),
        ("When did our fathers bring forth a new nation?", "Four score and seven years ago"),
        ("What formats does the ingest command read?", "It reads Markdown"),
        ("How are source ids verified?", "checks that the tool content"),
    ],
)
def test_a_plain_question_is_answered_by_the_sentence_that_states_it(question: str, answer: str) -> None:
    quotes = _quotes(question, ADDRESS, INDEX)
    assert quotes, question
    assert answer in quotes[0]


@pytest.mark.parametrize(
    "question",
    [
        # Only the question's names are repeated: nothing about what is asked of them.
        "Who assassinated Abraham Lincoln?",
        # A who question needs someone the question does not name.
        "Who spoke before Lincoln at Gettysburg?",
        # How many, and what year, need a number or a date the question does not hold.
        "How many soldiers died at Gettysburg?",
        "What year was the Bliss copy lost?",
        # A capitalized name is met only capitalized: "plain words" is not "Word".
        "Can Word files be searched?",
        "How are citations encrypted?",
    ],
)
def test_a_near_miss_is_still_refused(question: str) -> None:
    assert _quotes(question, ADDRESS, INDEX) == []


def test_a_lower_case_word_is_met_by_the_same_word_in_any_case() -> None:
    assert _quotes("Can word files be searched?", INDEX) == [
        "Search results are ranked with bm25, and the question is treated as plain words."
    ]


def test_a_question_in_capitals_is_read_as_if_it_were_not() -> None:
    assert read_question("WHO GAVE THE GETTYSBURG ADDRESS").names == set()
    assert _quotes("WHO GAVE THE GETTYSBURG ADDRESS?", ADDRESS, INDEX) == [
        "Abraham Lincoln, November 19, 1863."
    ]
    assert _quotes("How Are Source Ids Verified?", ADDRESS, INDEX)


def test_irregular_forms_and_near_synonyms_meet_in_one_term() -> None:
    assert term("brought") == term("bring")
    assert term("gave") == term("given") == term("give")
    assert term("verified") == term("checks") == term("validation")
    assert term("carries") == term("carry")
    assert term("encrypted") != term("checked")


def test_a_question_knows_its_kind_and_its_names() -> None:
    assert read_question("Who gave the Gettysburg Address").kind == "person"
    assert read_question("When is a page shown").kind == "time"
    assert read_question("What year did it end").kind == "date"
    assert read_question("How long does ingesting take").kind == "quantity"
    assert read_question("What is a chunk").kind is None
    names = read_question("Can LightRAG read Word files").names
    assert names == {"^lightrag", "^word"}


def _hit(**fields: Any) -> RetrievalHit:
    return RetrievalHit(dataset_name="docs", **fields)


def test_a_sentence_opening_with_it_is_not_quoted_for_the_terms_it_only_borrows() -> None:
    hit = _hit(
        title="Guide", text="An unresolved citation is shown as a plain label. It means nothing was found."
    )
    quotes = _quotes("What is an unresolved citation?", hit)
    assert quotes == ["An unresolved citation is shown as a plain label."]
