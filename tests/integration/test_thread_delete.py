"""Deleting a thread: the owner's thread and everything under it go; nobody else's is touched.

Runs on SQLite by default and on PostgreSQL when ``DATABASE_URL`` says so.
"""

from __future__ import annotations

from collections.abc import Callable
from uuid import uuid4

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.knowledge import RetrievalHit, RetrievalResult
from knowledgeweb.threads.errors import ThreadNotFound
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.services import message_append, thread_create, thread_delete


def _full_thread(owner: User, append_retrieval: Callable[..., Message], title: str) -> Thread:
    thread = thread_create(owner=owner, title=title)
    message_append(thread=thread, type="human", content="Why do owls hoot?")
    tool = append_retrieval(
        thread,
        RetrievalResult(provider="local", query="q", hits=(RetrievalHit(text="Owls hoot.", title="Owls"),)),
    )
    handle = tool.artifact["knowledge_sources"][0]["id"]  # type: ignore[index]
    message_append(
        thread=thread, type="ai", content=f"They hoot. [citation:Owls](#knowledge-source-{handle})"
    )
    return thread


@pytest.fixture
def mine(user: User, append_retrieval: Callable[..., Message]) -> Thread:
    return _full_thread(user, append_retrieval, "Mine")


@pytest.fixture
def theirs(other_user: User, append_retrieval: Callable[..., Message]) -> Thread:
    return _full_thread(other_user, append_retrieval, "Theirs")


def _untouched(thread: Thread) -> bool:
    return Thread.objects.filter(pk=thread.pk).exists() and Message.objects.filter(thread=thread).count() == 3


def test_the_service_deletes_the_thread_and_all_its_messages(
    user: User, mine: Thread, theirs: Thread
) -> None:
    deleted = thread_delete(owner=user, thread_id=mine.id)

    assert deleted.title == "Mine"
    assert not Thread.objects.filter(title="Mine").exists()
    assert not Message.objects.filter(thread_id=mine.id).exists()
    assert _untouched(theirs)


@pytest.mark.parametrize("which", ["theirs", "missing", "malformed"])
def test_the_service_refuses_what_is_not_the_owners_and_deletes_nothing(
    user: User, mine: Thread, theirs: Thread, which: str
) -> None:
    target = {"theirs": str(theirs.id), "missing": str(uuid4()), "malformed": "not-a-uuid"}[which]

    with pytest.raises(ThreadNotFound, match=r"^Thread not found\.$"):
        thread_delete(owner=user, thread_id=target)

    assert _untouched(mine)
    assert _untouched(theirs)


def test_the_api_deletes_the_callers_thread_with_204(
    api_client: Client, mine: Thread, theirs: Thread
) -> None:
    response = api_client.delete(f"/api/threads/{mine.id}")

    assert response.status_code == 204
    assert response.content == b""
    assert not Thread.objects.filter(pk=mine.pk).exists()
    assert not Message.objects.filter(thread_id=mine.id).exists()
    assert _untouched(theirs)
    assert api_client.get(f"/api/threads/{mine.id}").status_code == 404
    assert api_client.delete(f"/api/threads/{mine.id}").status_code == 404


def test_the_api_answers_404_for_another_users_thread_and_leaves_it(
    api_client: Client, mine: Thread, theirs: Thread
) -> None:
    response = api_client.delete(f"/api/threads/{theirs.id}")

    assert response.status_code == 404
    assert response.json() == {"detail": "Thread not found.", "code": "not_found"}
    assert _untouched(theirs)
    assert _untouched(mine)


def test_the_api_refuses_an_anonymous_delete(mine: Thread) -> None:
    response = Client().delete(f"/api/threads/{mine.id}")

    assert response.status_code == 401
    assert _untouched(mine)


def test_the_api_answers_422_for_a_malformed_id(api_client: Client, mine: Thread) -> None:
    assert api_client.delete("/api/threads/not-a-uuid").status_code == 422
    assert _untouched(mine)


@pytest.fixture
def browser(user: User) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def _csrf(client: Client, path: str) -> str:
    page = client.get(path)
    assert page.status_code == 200
    token: str = page.context["csrf_token"]
    return token


def test_the_page_asks_for_confirmation_before_deleting(browser: Client, mine: Thread) -> None:
    page = browser.get(f"/threads/{mine.id}/delete/")

    html = page.content.decode()
    assert page.status_code == 200
    assert 'method="post"' in html
    assert 'name="csrfmiddlewaretoken"' in html
    assert "Delete this thread?" in html
    assert _untouched(mine)  # looking is not deleting
    detail = browser.get(f"/threads/{mine.id}/").content.decode()
    assert f'href="/threads/{mine.id}/delete/"' in detail


def test_confirming_deletes_and_returns_to_the_list_with_a_notice(
    browser: Client, mine: Thread, theirs: Thread
) -> None:
    token = _csrf(browser, f"/threads/{mine.id}/delete/")

    response = browser.post(f"/threads/{mine.id}/delete/", {"csrfmiddlewaretoken": token}, follow=True)

    assert response.redirect_chain == [("/", 302)]
    assert "Deleted the thread “Mine”." in response.content.decode()
    assert not Thread.objects.filter(pk=mine.pk).exists()
    assert not Message.objects.filter(thread_id=mine.id).exists()
    assert _untouched(theirs)


def test_a_post_without_the_csrf_token_deletes_nothing(browser: Client, mine: Thread) -> None:
    response = browser.post(f"/threads/{mine.id}/delete/")

    assert response.status_code == 403
    assert _untouched(mine)


def test_another_users_thread_cannot_be_deleted_from_the_page(
    browser: Client, mine: Thread, theirs: Thread
) -> None:
    token = _csrf(browser, f"/threads/{mine.id}/delete/")

    assert browser.get(f"/threads/{theirs.id}/delete/").status_code == 404
    response = browser.post(f"/threads/{theirs.id}/delete/", {"csrfmiddlewaretoken": token})

    assert response.status_code == 404
    assert _untouched(theirs)
    assert _untouched(mine)


def test_an_anonymous_visitor_is_sent_to_log_in_and_nothing_is_deleted(mine: Thread) -> None:
    response = Client().post(f"/threads/{mine.id}/delete/")

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert _untouched(mine)
