"""An admin who may read any thread (staff with ``threads.view_thread``; superusers) opens another
user's thread in the viewer read-only; writes, the API and everyone else stay with the owner."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from knowledgeweb.bindings.services import binding_create
from knowledgeweb.library.models import Collection
from knowledgeweb.library.passages import passage_path
from knowledgeweb.library.services import ChunkDraft, collection_get_or_create, document_ingest
from knowledgeweb.threads.models import Message, MessageRender, Thread
from knowledgeweb.threads.rendering.tools import PREVIEW_CHARS
from knowledgeweb.threads.services import message_append, thread_create
from tests.pages import with_hits

pytestmark = pytest.mark.django_db

PASSAGE = "Quarterly salary bands for every engineer."
TOOL_OUTPUT = "line of tool output\n" * (PREVIEW_CHARS // 10)  # longer than the preview: cut


@dataclass(frozen=True, slots=True)
class Owned:
    thread: Thread
    tool: Message
    answer: Message


@pytest.fixture
def hr() -> Collection:
    collection = collection_get_or_create(name="hr")
    document_ingest(
        collection=collection,
        source_key="salaries",
        content_hash="salaries",
        title="Salaries",
        source_url="",
        chunks=[ChunkDraft("Intro paragraph."), ChunkDraft(PASSAGE)],
    )
    return collection


@pytest.fixture
def owned(user: User) -> Owned:
    thread = thread_create(owner=user, title="Alice's salary question")
    message_append(thread=thread, type="human", content="What are the salary bands?")
    tool = message_append(thread=thread, type="tool", name="shell", content=TOOL_OUTPUT)
    answer = message_append(thread=thread, type="ai", content="Bands exist, per the handbook.")
    return Owned(thread=thread, tool=tool, answer=answer)


def _staff(name: str, *, permission: str | None) -> User:
    """A staff user holding only ``permission`` (a ``threads`` codename), or none."""
    staff = User.objects.create_user(name, password=f"{name}-password-1", is_staff=True)
    if permission:
        staff.user_permissions.add(
            Permission.objects.get(codename=permission, content_type__app_label="threads")
        )
    return staff


def _reader(user: User, hr: Collection) -> Client:
    """A client signed in as ``user``, whose local binding serves ``hr`` (so the passage page
    itself opens and only the thread it names decides the answer)."""
    binding_create(name=f"{user.username}-hr", provider="local", tools=["knowledge_search"], users=[user])
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def superuser() -> User:
    return User.objects.create_superuser("root", password="root-password-1")


@pytest.fixture
def viewer() -> User:
    return _staff("auditor", permission="view_thread")


@pytest.fixture
def editor() -> User:
    """Staff holding only ``change_thread``: the admin shows them the thread's page too."""
    return _staff("editor", permission="change_thread")


@pytest.fixture
def staff_without_permission() -> User:
    return _staff("helpdesk", permission=None)


def _back_link(owned: Owned) -> str:
    path = passage_path(collection_name="hr", excerpt=PASSAGE).removesuffix("#passage")
    return f"{path}&thread={owned.thread.id}&cite=cite-{owned.answer.id.hex}-1"


@pytest.mark.parametrize("who", ["superuser", "viewer", "editor"])
def test_an_admin_who_may_read_threads_reads_another_users_thread_read_only(
    who: str, owned: Owned, hr: Collection, request: pytest.FixtureRequest
) -> None:
    admin = request.getfixturevalue(who)
    client = _reader(admin, hr)
    thread_id = owned.thread.id

    page = client.get(f"/threads/{thread_id}/")

    assert page.status_code == 200
    html = with_hits(client, page.content.decode())
    assert "Alice&#x27;s salary question" in html
    assert "What are the salary bands?" in html
    assert "Bands exist, per the handbook." in html
    assert f'href="/messages/{owned.tool.id}/content/" data-full-output' in html
    assert "Read-only: you are viewing alice's thread as an admin." in html
    # No write control: no follow-up form, no delete link, no export (the API is the owner's).
    assert 'data-form="follow-up"' not in html
    assert f"/threads/{thread_id}/ask/" not in html
    assert 'data-action="delete"' not in html
    assert f"/threads/{thread_id}/delete/" not in html
    assert "data-export" not in html

    full = client.get(f"/messages/{owned.tool.id}/content/")
    assert full.status_code == 200
    assert full.content.decode() == TOOL_OUTPUT

    passage = client.get(_back_link(owned))
    assert passage.status_code == 200
    line = re.search(
        r'<p class="document-citing" data-document-citing>(.*?)</p>', passage.content.decode(), re.S
    )
    assert line is not None
    assert "answer 1" in line.group(1)
    assert f'href="/threads/{thread_id}/#cite-{owned.answer.id.hex}-1"' in line.group(1)


def test_the_owner_still_sees_the_write_controls_and_no_read_only_note(
    user: User, owned: Owned, hr: Collection
) -> None:
    html = _reader(user, hr).get(f"/threads/{owned.thread.id}/").content.decode()
    assert 'data-form="follow-up"' in html
    assert f'href="/threads/{owned.thread.id}/delete/"' in html
    assert 'data-export="json"' in html
    assert "data-read-only" not in html


@pytest.mark.parametrize("who", ["staff_without_permission", "other_user"])
def test_staff_without_the_permission_and_ordinary_users_get_404_everywhere(
    who: str, owned: Owned, hr: Collection, request: pytest.FixtureRequest
) -> None:
    client = _reader(request.getfixturevalue(who), hr)
    path = passage_path(collection_name="hr", excerpt=PASSAGE).removesuffix("#passage")
    assert client.get(path).status_code == 200, "the passage itself is open to this reader"
    for url in (f"/threads/{owned.thread.id}/", f"/messages/{owned.tool.id}/content/", _back_link(owned)):
        response = client.get(url)
        assert response.status_code == 404, url
        assert "salary question" not in response.content.decode()


def test_the_permission_without_staff_status_opens_nothing(owned: Owned, hr: Collection) -> None:
    former = _staff("former", permission="view_thread")
    former.is_staff = False
    former.save(update_fields=["is_staff"])
    client = _reader(former, hr)
    assert client.get(f"/threads/{owned.thread.id}/").status_code == 404
    assert client.get(f"/messages/{owned.tool.id}/content/").status_code == 404


@pytest.mark.parametrize("who", ["superuser", "viewer", "editor"])
def test_an_admin_cannot_write_to_another_users_thread(
    who: str, owned: Owned, hr: Collection, request: pytest.FixtureRequest
) -> None:
    client = _reader(request.getfixturevalue(who), hr)
    thread_id = owned.thread.id
    before = (Thread.objects.count(), Message.objects.count(), MessageRender.objects.count())
    binding = f"{request.getfixturevalue(who).username}-hr"

    follow_up = {"question": "And the bonus?", "binding": binding}
    assert client.post(f"/threads/{thread_id}/ask/", follow_up).status_code == 404
    assert client.post(f"/threads/{thread_id}/ask/stream/", follow_up).status_code == 404
    assert client.get(f"/threads/{thread_id}/delete/").status_code == 404
    assert client.post(f"/threads/{thread_id}/delete/").status_code == 404

    assert (Thread.objects.count(), Message.objects.count(), MessageRender.objects.count()) == before
    assert Thread.objects.filter(pk=thread_id, title="Alice's salary question").exists()
    assert not Message.objects.filter(content="And the bonus?").exists()


def test_the_api_and_the_thread_list_stay_the_admins_own(
    superuser: User, owned: Owned, hr: Collection
) -> None:
    client = _reader(superuser, hr)
    assert client.get(f"/api/threads/{owned.thread.id}").status_code == 404
    listing = client.get("/api/threads").json()
    assert all(item["id"] != str(owned.thread.id) for item in listing)
    page = client.get("/")
    assert page.status_code == 200
    assert "salary question" not in page.content.decode()


def test_the_thread_admins_viewer_link_opens_the_thread(superuser: User, owned: Owned) -> None:
    client = Client()
    client.force_login(superuser)
    change = client.get(f"/admin/threads/thread/{owned.thread.id}/change/")
    assert change.status_code == 200
    match = re.search(r'<a href="([^"]+)" data-viewer-link>Open in the viewer</a>', change.content.decode())
    assert match is not None

    viewer = client.get(match.group(1))

    assert viewer.status_code == 200
    assert "Bands exist, per the handbook." in viewer.content.decode()
    assert "data-read-only" in viewer.content.decode()


def test_the_viewer_link_opens_the_thread_for_staff_with_only_the_view_permission(
    viewer: User, owned: Owned
) -> None:
    client = Client()
    client.force_login(viewer)
    change = client.get(f"/admin/threads/thread/{owned.thread.id}/change/")
    assert change.status_code == 200
    match = re.search(r'<a href="([^"]+)" data-viewer-link>', change.content.decode())
    assert match is not None
    assert client.get(match.group(1)).status_code == 200
