"""``/ask/``: a question and a binding -> retrieval -> composed answer -> the new thread."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.answers.extractive import NOTHING_FOUND
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.library.provider import LocalProvider
from knowledgeweb.library.services import ChunkDraft
from knowledgeweb.providers.errors import ProviderTimeoutError, ProviderUnavailableError
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.selectors import thread_citations
from knowledgeweb.web.ask import NO_BINDINGS, SourceChoice
from tests.factories import BindingFactory, CollectionFactory, logged_in

ASK = "/ask/"


@pytest.fixture
def corpus(db: None) -> None:
    CollectionFactory.create(
        name="Field guide",
        documents={
            "Owls": ChunkDraft("Owls hunt at night. Their soft feathers make their flight silent.", page=4),
            "Herons": "Herons wade in shallow water and spear fish with their bills.",
        },
    )


@pytest.fixture
def binding(user: User) -> KnowledgeBinding:
    return BindingFactory.create(name="local-guide", users=[user])


@pytest.fixture
def client(user: User) -> Client:
    return logged_in(user)


def _nothing_written() -> bool:
    return Thread.objects.count() == 0 and Message.objects.count() == 0


def _alert(html: str) -> str:
    match = re.search(r'role="alert" data-ask-error="([^"]+)">([^<]*)<', html)
    assert match, html
    return f"{match.group(1)}: {match.group(2)}"


def test_the_ask_page_needs_a_login(db: None) -> None:
    response = Client().get(ASK)

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_the_picker_offers_only_the_users_usable_bindings(
    client: Client, binding: KnowledgeBinding, other_user: User
) -> None:
    BindingFactory.create(name="someone-elses", users=[other_user])
    BindingFactory.create(name="switched-off", users=[binding.users.get()], enabled=False)

    html = client.get(ASK).content.decode()

    assert re.findall(r'<input type="radio" name="binding" value="([^"]+)"', html) == ["local-guide"]
    assert 'data-form="ask"' in html


def test_a_question_becomes_a_thread_with_resolved_citations(
    client: Client, user: User, binding: KnowledgeBinding, corpus: None
) -> None:
    response = client.post(ASK, {"question": "How do owls hunt at night?", "binding": "local-guide"})

    thread = Thread.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/threads/{thread.id}/"
    assert (thread.owner, thread.title) == (user, "How do owls hunt at night?")
    assert list(thread.messages.values_list("type", "name", "status")) == [
        ("human", "", "success"),
        ("tool", "knowledge_search", "success"),
        ("ai", "", "success"),
    ]
    [report] = thread_citations(thread=thread)
    assert report.citations
    assert {c.state for c in report.citations} == {"resolved"}
    assert {c.source.title for c in report.citations if c.source} == {"Owls"}

    page = client.get(response["Location"]).content.decode()
    assert page.count('data-citation="resolved"') == len(report.citations)
    assert 'data-citation="unresolved"' not in page


def test_the_answer_cites_a_pdf_page_and_the_collection(
    client: Client, binding: KnowledgeBinding, corpus: None
) -> None:
    client.post(ASK, {"question": "silent flight feathers", "binding": "local-guide"})

    [report] = thread_citations(thread=Thread.objects.get())
    source = report.citations[0].source
    assert source is not None
    assert (source.provider, source.dataset_name, source.page, source.url) == (
        "local",
        "Field guide",
        4,
        None,
    )


def test_an_empty_question_is_refused_on_the_page_and_nothing_is_written(
    client: Client, binding: KnowledgeBinding, corpus: None
) -> None:
    response = client.post(ASK, {"question": "   ", "binding": "local-guide"})

    assert response.status_code == 422
    assert _alert(response.content.decode()) == "question: Enter a question."
    assert _nothing_written()


def test_an_over_long_question_is_refused_and_nothing_is_written(
    client: Client, binding: KnowledgeBinding
) -> None:
    response = client.post(ASK, {"question": "owls " * 500, "binding": "local-guide"})

    assert response.status_code == 422
    assert _alert(response.content.decode()).startswith(
        "question: Ensure this value has at most 2000 characters"
    )
    assert _nothing_written()


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"question": "owls\x00", "binding": "local-guide"}, "question: Null characters are not allowed."),
        ({"binding": "local-guide"}, "question: Enter a question."),
        ({"question": "owls"}, "binding: Choose a source."),
        ({"question": "owls", "binding": "local-guide\x00"}, "binding: Choose one of your sources."),
    ],
)
def test_a_malformed_form_is_refused_on_the_page_and_nothing_is_written(
    client: Client, binding: KnowledgeBinding, corpus: None, data: dict[str, str], expected: str
) -> None:
    response = client.post(ASK, data)

    assert response.status_code == 422
    assert _alert(response.content.decode()) == expected
    assert _nothing_written()


def test_without_bindings_the_page_says_so_and_a_post_writes_nothing(client: Client, corpus: None) -> None:
    page = client.get(ASK)
    response = client.post(ASK, {"question": "owls", "binding": "local-guide"})

    assert page.status_code == 200
    assert _alert(page.content.decode()) == f"no-bindings: {NO_BINDINGS}"
    assert 'data-form="ask"' not in page.content.decode()
    assert response.status_code == 403
    assert _alert(response.content.decode()) == f"no-bindings: {NO_BINDINGS}"
    assert _nothing_written()


def test_a_binding_that_is_not_the_users_is_refused_and_nothing_is_written(
    client: Client, binding: KnowledgeBinding, other_user: User, corpus: None
) -> None:
    BindingFactory.create(name="bobs", users=[other_user])

    response = client.post(ASK, {"question": "owls", "binding": "bobs"})

    assert response.status_code == 422
    assert _alert(response.content.decode()) == "binding: Choose one of your sources."
    assert _nothing_written()


def test_a_provider_failure_is_shown_on_the_page_and_no_thread_is_left_behind(
    client: Client, binding: KnowledgeBinding, corpus: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: LocalProvider, query: str, **_: object) -> None:
        raise ProviderUnavailableError("The local index could not be searched: disk I/O error")

    monkeypatch.setattr(LocalProvider, "search", broken)

    response = client.post(ASK, {"question": "How do owls hunt?", "binding": "local-guide"})

    assert response.status_code == 424
    html = response.content.decode()
    assert _alert(html) == (
        "provider: The source &#x27;local-guide&#x27; could not be searched just now. "
        "Try again in a moment, or pick another source."
    )
    # The technical detail is one disclosure away, and the question is kept for another try.
    detail = re.search(r"<details[^>]*data-error-detail>.*?</details>", html, re.S)
    assert detail
    assert (
        "knowledge_search failed (Local index (embedded), binding &#x27;local-guide&#x27;): "
        "The local index could not be searched: disk I/O error"
    ) in detail.group(0)
    assert re.search(r">\s*How do owls hunt\?</textarea>", html)
    assert _nothing_written()


def test_a_binding_disabled_after_the_page_loaded_is_refused_and_nothing_is_written(
    client: Client, binding: KnowledgeBinding, corpus: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The picker was built while the binding was usable; it is switched off before the search.
    monkeypatch.setattr(
        "knowledgeweb.web.ask._bindings",
        lambda user: [SourceChoice(name="local-guide", title="Guide", description="", timeout=30)],
    )
    KnowledgeBinding.objects.filter(pk=binding.pk).update(enabled=False)

    response = client.post(ASK, {"question": "owls", "binding": "local-guide"})

    assert response.status_code == 403
    html = response.content.decode()
    assert _alert(html) == (
        "binding: The source &#x27;Guide&#x27; cannot be used by your account right now. Pick another source."
    )
    assert "Binding &#x27;local-guide&#x27; is disabled." in html  # the technical detail
    assert _nothing_written()


def test_a_question_with_no_matches_gets_an_honest_answer_without_citations(
    client: Client, binding: KnowledgeBinding, corpus: None
) -> None:
    response = client.post(ASK, {"question": "volcanoes and lava", "binding": "local-guide"})

    assert response.status_code == 302
    answer = Message.objects.get(type="ai")
    assert answer.content == NOTHING_FOUND


def test_sources_are_offered_by_their_display_name_and_description_and_the_question_has_focus(
    client: Client, binding: KnowledgeBinding
) -> None:
    KnowledgeBinding.objects.filter(pk=binding.pk).update(
        title="Field guide", description="Birds of the marsh, with page numbers."
    )

    html = client.get(ASK).content.decode()

    assert re.findall(r"data-source-title>([^<]*)<", html) == ["Field guide"]
    assert re.findall(r"data-source-description>([^<]*)<", html) == ["Birds of the marsh, with page numbers."]
    assert "local-guide (local)" not in html
    assert re.search(r"<textarea[^>]*\bautofocus\b", html)
    # The only source is chosen already.
    assert re.search(r'<input type="radio" name="binding" value="local-guide"[^>]*checked', html)


def test_a_source_without_a_display_name_is_offered_by_its_name(
    client: Client, binding: KnowledgeBinding
) -> None:
    html = client.get(ASK).content.decode()

    assert re.findall(r"data-source-title>([^<]*)<", html) == ["local-guide"]
    assert "data-source-description" not in html


def test_a_timeout_says_which_source_and_how_long_in_plain_language_and_keeps_the_question(
    client: Client, binding: KnowledgeBinding, corpus: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    KnowledgeBinding.objects.filter(pk=binding.pk).update(title="Product docs", timeout=10)

    def slow(self: LocalProvider, query: str, **_: object) -> None:
        raise ProviderTimeoutError("ReadTimeout: timed out after 10.0 s")

    monkeypatch.setattr(LocalProvider, "search", slow)

    response = client.post(ASK, {"question": "Where do herons wade?", "binding": "local-guide"})

    assert response.status_code == 424
    html = response.content.decode()
    assert _alert(html) == (
        "provider: The source &#x27;Product docs&#x27; did not answer within 10 seconds. "
        "Try again, or pick another source."
    )
    assert "ReadTimeout" in re.search(r"<details[^>]*data-error-detail>.*?</details>", html, re.S).group(0)  # type: ignore[union-attr]
    assert "ReadTimeout" not in _alert(html)
    assert re.search(r">\s*Where do herons wade\?</textarea>", html)
    assert _nothing_written()


def test_without_a_source_the_page_names_the_administrators_to_ask(client: Client, db: None) -> None:
    User.objects.create_superuser("root-admin", email="root@example.org", password="x-long-password-1")
    User.objects.create_user("staff-only", is_staff=True)

    html = client.get(ASK).content.decode()

    assert 'data-form="ask"' not in html
    assert "data-administrators" in html
    assert "root-admin" in html
    assert 'href="mailto:root@example.org"' in html
    assert "staff-only" not in html


def test_without_a_source_or_an_administrator_the_page_still_says_who_to_ask(client: Client) -> None:
    html = client.get(ASK).content.decode()

    assert "Ask whoever runs this knowledgeweb to give you access" in html
