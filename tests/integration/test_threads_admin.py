"""Admin: threads show their messages read-only; a token is shown once, at creation, and only hashed after."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.accounts.models import ApiToken
from knowledgeweb.accounts.services import token_create
from knowledgeweb.accounts.tokens import token_digest
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.services import message_append

pytestmark = pytest.mark.django_db


def test_a_thread_page_shows_its_messages_read_only(admin_client: Client, thread: Thread) -> None:
    message_append(
        thread=thread,
        type="tool",
        name="knowledge_search",
        content="tool output <script>alert(1)</script>",
        artifact={"k": "<b>bold</b>"},
    )
    response = admin_client.get(f"/admin/threads/thread/{thread.id}/change/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "tool output &lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&quot;k&quot;: &quot;&lt;b&gt;bold&lt;/b&gt;&quot;" in page
    assert "<script>alert(1)" not in page
    for field in ("content", "type", "name", "artifact", "status"):
        assert f'name="messages-0-{field}"' not in page, f"{field} must not be editable"
    assert 'name="messages-0-DELETE"' not in page
    assert "messages-__prefix__" not in page, "no blank form to add a message"


def test_editing_a_thread_in_the_admin_leaves_its_messages_intact(
    admin_client: Client, thread: Thread
) -> None:
    message = message_append(thread=thread, type="human", content="original")
    page = admin_client.get(f"/admin/threads/thread/{thread.id}/change/")
    management = {
        key: page.context["inline_admin_formsets"][0].formset.management_form[key].value()
        for key in ("TOTAL_FORMS", "INITIAL_FORMS", "MIN_NUM_FORMS", "MAX_NUM_FORMS")
    }
    data = {"title": "Renamed", "agent_name": "", **{f"messages-{k}": v for k, v in management.items()}}
    response = admin_client.post(f"/admin/threads/thread/{thread.id}/change/", data)
    assert response.status_code == 302
    thread.refresh_from_db()
    assert thread.title == "Renamed"
    assert Message.objects.get(pk=message.pk).content == "original"


def test_threads_cannot_be_added_in_the_admin(admin_client: Client) -> None:
    assert admin_client.get("/admin/threads/thread/add/").status_code == 403


def test_adding_a_token_shows_it_once_and_stores_only_its_hash(admin_client: Client, user: User) -> None:
    response = admin_client.post("/admin/accounts/apitoken/add/", {"user": user.pk, "name": "agent"})
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    token = ApiToken.objects.get()
    page = response.content.decode()
    start = page.index('data-testid="raw-token">') + len('data-testid="raw-token">')
    raw = page[start : page.index("</code>", start)]
    assert token.digest == token_digest(raw)
    assert (token.user, token.name) == (user, "agent")
    assert Client().get("/api/threads", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 200

    listing = admin_client.get("/admin/accounts/apitoken/").content.decode()
    detail = admin_client.get(f"/admin/accounts/apitoken/{token.pk}/change/").content.decode()
    for later_page in (listing, detail):
        assert raw not in later_page
        assert token.digest not in later_page
        assert token.prefix in later_page


def test_a_token_can_be_revoked_in_the_admin(admin_client: Client, user: User) -> None:
    token, raw = token_create(user=user)
    response = admin_client.post(
        f"/admin/accounts/apitoken/{token.pk}/change/", {"name": "old", "is_active": ""}
    )
    assert response.status_code == 302
    assert ApiToken.objects.get(pk=token.pk).is_active is False
    assert Client().get("/api/threads", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 401


def test_each_thread_links_to_its_page_in_the_viewer(admin_client: Client, thread: Thread) -> None:
    link = f'<a href="/threads/{thread.id}/" data-viewer-link>Open in the viewer</a>'

    assert link in admin_client.get("/admin/threads/thread/").content.decode()
    assert link in admin_client.get(f"/admin/threads/thread/{thread.id}/change/").content.decode()
    owner = Client()
    owner.force_login(thread.owner)
    assert owner.get(f"/threads/{thread.id}/").status_code == 200
