"""The one turn service with the extractive composer: everything is written together, or nothing is."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from knowledgeweb.answers import ExtractiveComposer
from knowledgeweb.answers.errors import AnswerError
from knowledgeweb.composer.services import turn_ask
from knowledgeweb.knowledge import read_sources
from knowledgeweb.threads.models import Message, Thread
from tests.factories import BindingFactory, CollectionFactory


@pytest.fixture
def bound(user: User) -> User:
    BindingFactory.create(name="local", users=[user])
    CollectionFactory.create(
        name="notes",
        documents={
            f"Note {number}": f"Kingfishers dive for fish, note {number}. " * 8 for number in range(6)
        },
    )
    return user


def question_answer(*, user: User, question: str, binding_name: str, **options: object) -> Thread:
    """A new thread asked through the one turn service, counted against no limit."""
    result = turn_ask(user=user, question=question, binding_name=binding_name, rate_key=None, **options)  # type: ignore[arg-type]
    return Thread.objects.get(pk=result.thread_id)


def test_a_failing_composer_leaves_no_thread_and_no_messages(
    bound: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    def exploding(self: ExtractiveComposer, **kwargs: object) -> str:
        raise RuntimeError("composer bug")

    monkeypatch.setattr(ExtractiveComposer, "compose", exploding)
    with pytest.raises(RuntimeError, match="composer bug"):
        question_answer(user=bound, question="kingfishers", binding_name="local")

    assert Thread.objects.count() == 0
    assert Message.objects.count() == 0


def test_an_unknown_binding_is_refused_with_its_reason_and_nothing_is_written(bound: User) -> None:
    with pytest.raises(AnswerError) as caught:
        question_answer(user=bound, question="kingfishers", binding_name="nope")

    assert (caught.value.kind, caught.value.message) == (
        "binding",
        "No binding named 'nope' is available to you.",
    )
    assert Thread.objects.count() == 0


def test_a_long_question_gets_a_shortened_title(bound: User) -> None:
    question = "kingfishers " * 40

    thread = question_answer(user=bound, question=question, binding_name="local")

    assert len(thread.title) <= 200
    assert thread.title.endswith("…")
    assert thread.messages.get(type="human").content == question.strip()


def test_a_small_output_budget_cuts_the_tool_message_and_the_answer_cites_only_what_survived(
    bound: User,
) -> None:
    thread = question_answer(
        user=bound,
        question="kingfishers",
        binding_name="local",
        output_limit=1200,
    )

    tool = thread.messages.get(type="tool")
    surviving = read_sources(tool.name, tool.content, tool.artifact)
    assert "[Output truncated to fit the tool output budget of 1200 characters.]" in tool.content
    assert 1 <= len(surviving) < 6
    answer = thread.messages.get(type="ai").content
    cited = {line.split("](#")[1].rstrip(")") for line in answer.splitlines() if "](#" in line}
    assert cited
    assert cited <= set(surviving)


@pytest.mark.django_db(transaction=True)
def test_the_provider_is_called_outside_any_transaction(bound: User, monkeypatch: pytest.MonkeyPatch) -> None:
    # On SQLite an open write transaction locks the whole database for as long as a
    # remote provider takes to answer; the search must come before the writes.
    from django.db import connection

    from knowledgeweb.library.provider import LocalProvider

    seen: list[bool] = []
    real_search = LocalProvider.search

    def watched(self: LocalProvider, query: str, **kwargs: object) -> object:
        seen.append(connection.in_atomic_block)
        return real_search(self, query, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(LocalProvider, "search", watched)
    thread = question_answer(user=bound, question="kingfishers", binding_name="local")

    assert seen == [False]
    assert [m.type for m in thread.messages.order_by("seq")] == ["human", "tool", "ai"]
