"""A labelled set of questions over the demo corpus, asked through the real retrieval path.

Each answerable question names a phrase that a quoted sentence must hold (the
answer); each unanswerable one must get the abstention, with no citation. The
corpus is ``sample_corpus/`` ingested into the local index, as ``manage.py demo``
does, and every question goes through the one turn service (``turn_ask``) with the extractive
composer: retrieval, formatting, the output budget, then composition.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User

from knowledgeweb.answers.extractive import ABSTAIN, NOTHING_FOUND
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.composer.services import turn_ask
from knowledgeweb.knowledge import find_citations
from knowledgeweb.library.services.ingest import paths_ingest
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.selectors import thread_citations, thread_messages

ANSWERABLE: list[tuple[str, str]] = [
    # (question, a phrase that a quoted sentence must contain)
    ("What did Lincoln say about government of the people?", "government of the people, by the people"),
    ("government of the people", "shall not perish from the earth"),
    ("When did our fathers bring forth a new nation?", "Four score and seven years ago"),
    ("To what proposition was the new nation dedicated?", "all men are created equal"),
    ("What did the brave men who struggled here do to the ground?", "have consecrated it"),
    ("What will the world little note nor long remember?", "The world will little note"),
    ("How is a source id computed?", "source id computed from its provider"),
    ("What does the viewer show instead of the link label?", "title stored with the evidence"),
    ("What is a malformed citation?", "is marked as malformed"),
    ("What happens to an unresolved citation?", "unresolved"),
    ("How are validation results memoized?", "memoized for each immutable message"),
    ("Which full-text search does the local index use on SQLite?", "FTS5"),
    ("How are search results ranked?", "bm25"),
    ("Does a chunk ever span two PDF pages?", "never spans two PDF pages"),
    ("What happens when the same file is ingested again?", "updates the document instead of duplicating"),
    ("Where are provider credentials read from?", "environment variables"),
    ("Can a binding with no users be used?", "can be used by nobody"),
    ("How are LightRAG entity relations labelled?", "labelled as unattributed"),
    ("When does a result keep RAGFlow's native citation snapshot?", "complete locators"),
    ("How should a reviewer treat the claim behind an unresolved citation?", "as unsupported"),
    (
        "What happens to the tool message when a retrieval returns more text than the budget allows?",
        "the tool message is cut",
    ),
]

UNANSWERABLE: list[str] = [
    "What is the boiling point of mercury in kelvin?",
    "Who won the football world cup in 1998?",
    "What is the capital city of Australia?",
    "How many moons does Jupiter have?",
    "What year did the civil war end?",
    "Who was president after Lincoln?",
    "How much does a RAGFlow enterprise licence cost?",
    "What is the population of Gettysburg today?",
    "Which programming language is LightRAG written in?",
    "How do I reset my password?",
    "What is the recipe for apple pie?",
]


@pytest.fixture
def asker(user: User) -> User:
    paths_ingest(
        collection_name="Sample corpus",
        paths=[Path(settings.BASE_DIR) / "sample_corpus" / "documents"],
        key_root=Path(settings.BASE_DIR),
    )
    binding_create(name="demo", provider="local", tools=["knowledge_search"], users=[user])
    return user


def _answer(user: User, question: str) -> tuple[str, list[str]]:
    """The answer's Markdown and the excerpts its resolved citations point at."""
    result = turn_ask(user=user, question=question, binding_name="demo", rate_key=None)
    thread = Thread.objects.get(pk=result.thread_id)
    messages = thread_messages(thread=thread)
    answer = messages[-1]
    report = thread_citations(thread=thread)
    resolved = [c for entry in report for c in entry.citations if c.state == "resolved"]
    assert len(resolved) == len(find_citations(answer.content)), "every citation it writes resolves"
    return answer.content, [c.source.excerpt for c in resolved if c.source is not None]


def test_the_labelled_set_is_big_enough() -> None:
    assert len(ANSWERABLE) + len(UNANSWERABLE) >= 20
    assert len(ANSWERABLE) >= 10
    assert len(UNANSWERABLE) >= 10


@pytest.mark.django_db
def test_no_unanswerable_question_gets_an_answer(asker: User) -> None:
    answered = {}
    for question in UNANSWERABLE:
        answer, _ = _answer(asker, question)
        # Abstaining, or finding nothing at all to quote: either way, no answer and no citation.
        if answer not in (ABSTAIN, NOTHING_FOUND) or find_citations(answer):
            answered[question] = answer
    assert answered == {}


@pytest.mark.django_db
def test_every_answerable_question_quotes_a_whole_sentence_holding_the_answer(asker: User) -> None:
    failures = {}
    for question, phrase in ANSWERABLE:
        answer, excerpts = _answer(asker, question)
        quotes = [line for line in answer.splitlines() if line.startswith("- ")]
        if not any(phrase in quote.replace("\\", "") for quote in quotes):
            failures[question] = answer
            continue
        # Quoted whole: each quote ends its sentence, and appears in the cited excerpt.
        for quote in quotes:
            text = quote[2:].split(" [citation:")[0].replace("\\", "")
            assert text.endswith((".", "!", "?", '."', ".)")), text
            assert any(" ".join(text.split()) in " ".join(excerpt.split()) for excerpt in excerpts), text
    assert failures == {}
