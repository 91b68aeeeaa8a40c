"""The thread page's last window, stored by the write that made it (issue 25, decision 0108).

A stored page must be exactly the page the view would assemble, for every reader (verdict
chips laid over it included), served only while it is current, and a failure to store it
must never lose the write.
"""

from __future__ import annotations

import importlib
import io
import logging
import re

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.db.models import F, Value
from django.db.models.functions import Concat
from django.test import Client
from django.test.utils import CaptureQueriesContext

from knowledgeweb.threads.models import Message, StoredPage, Thread
from knowledgeweb.threads.rendering import version
from knowledgeweb.threads.services import message_append
from knowledgeweb.web.rendering import stored
from tests.factories import logged_in
from tests.long_threads import long_thread
from tests.review_queues import cited_thread, judge, queue_for

pytestmark = pytest.mark.django_db

_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"')


@pytest.fixture
def owner() -> User:
    return User.objects.create_user("owner", password="pw-owner-1")


def _page(client: Client, thread: Thread, query: str = "") -> str:
    response = client.get(f"/threads/{thread.id}/{query}")
    assert response.status_code == 200
    # Each response masks the CSRF token afresh; everything else must be the same.
    return _CSRF.sub("csrf", response.content.decode())


def _assembled(client: Client, thread: Thread, query: str = "") -> str:
    """The page as the view assembles it when no current page is stored."""
    kept = StoredPage.objects.get(thread=thread)
    StoredPage.objects.filter(thread=thread).update(assembly="an older build")
    try:
        return _page(client, thread, query)
    finally:
        StoredPage.objects.filter(thread=thread).update(assembly=kept.assembly)


def _stored(thread: Thread) -> StoredPage:
    page = StoredPage.objects.get(thread=thread)
    thread.refresh_from_db()
    assert (page.revision, page.renderer_version) == (thread.render_revision, version.RENDERER_VERSION)
    assert page.assembly == stored.assembly_digest()
    return page


def test_the_stored_last_window_is_the_page_the_view_would_assemble(owner: User) -> None:
    thread, _ = long_thread(owner, 60)  # windows of 100, 100 and 40; problems in the first and last
    page = _stored(thread)
    client = logged_in(owner)

    served = _page(client, thread)

    assert page.window == 3
    assert served == _assembled(client, thread)
    assert "Answer 59 per" in served
    assert "data-issue-walk" in served
    # The last window by its number is the stored page; another window is assembled per view.
    assert _page(client, thread, "?window=3") == served
    first = _page(client, thread, "?window=1")
    assert "Answer 0 per" in first
    assert "Answer 59 per" not in first


def test_every_reader_sees_their_own_verdicts_laid_over_the_same_stored_page(owner: User) -> None:
    reviewer = User.objects.create_user("reviewer", password="pw-reviewer-1")
    lead = User.objects.create_user("lead", password="pw-lead-1")
    thread = cited_thread(owner, citations=3)
    queue_for([owner], [reviewer], lead=lead)
    judge(thread, reviewer, ["supports", "does_not_support", "cant_tell"], note="checked <b>twice</b>")

    for reader in (owner, reviewer, lead):
        client = logged_in(reader)
        served = _page(client, thread)
        assert served == _assembled(client, thread), reader.username
        assert served.count('data-verdict="does_not_support"') == 1
        assert served.count("Verdicts on this answer") == 1
        assert "checked &lt;b&gt;twice&lt;/b&gt;" in served
    # The reviewer's verdicts were recorded after the page was stored: it was not stored again.
    assert _stored(thread).revision == Thread.objects.get(pk=thread.pk).render_revision


def test_each_write_stores_the_last_window_again_and_a_view_reads_one_row(owner: User) -> None:
    thread = cited_thread(owner)
    before = _stored(thread).revision
    client = logged_in(owner)

    message_append(thread=thread, type="human", content="A later question about otters?")

    page = _stored(thread)
    assert page.revision == before + 1
    assert "A later question about otters?" in page.items
    with CaptureQueriesContext(connection) as queries:
        served = _page(client, thread)
    assert "A later question about otters?" in served
    reads = [q["sql"] for q in queries if "threads_storedpage" in q["sql"]]
    assert len(reads) == 1
    assert not [q["sql"] for q in queries if "threads_messagerender" in q["sql"]]


def test_a_stored_page_is_served_only_at_the_revision_and_by_the_code_that_made_it(owner: User) -> None:
    thread = cited_thread(owner)
    client = logged_in(owner)
    # Proof the stored page is what is served: a marker written into it shows ...
    StoredPage.objects.filter(thread=thread).update(items=Concat(F("items"), Value("<li>STORED MARKER</li>")))
    assert "STORED MARKER" in _page(client, thread)

    # ... and never once the thread has moved on without it (a write whose store failed),
    Thread.objects.filter(pk=thread.pk).update(render_revision=F("render_revision") + 1)
    assert "STORED MARKER" not in _page(client, thread)
    Thread.objects.filter(pk=thread.pk).update(render_revision=F("render_revision") - 1)
    assert "STORED MARKER" in _page(client, thread)

    # ... nor under another renderer,
    saved = version.RENDERER_VERSION
    version.RENDERER_VERSION = saved + 1
    try:
        assert "STORED MARKER" not in _page(client, thread)
    finally:
        version.RENDERER_VERSION = saved

    # ... nor another build of the page assembly; `manage.py rerender` stores it again.
    StoredPage.objects.filter(thread=thread).update(assembly="an older build")
    assert "STORED MARKER" not in _page(client, thread)
    call_command("rerender", stdout=io.StringIO())
    assert _stored(thread).assembly == stored.assembly_digest()
    assert "STORED MARKER" not in StoredPage.objects.get(thread=thread).items


def test_a_page_that_cannot_be_stored_never_loses_the_write(
    owner: User, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    thread = cited_thread(owner)
    before = _stored(thread)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("assembly failed")

    monkeypatch.setattr(stored, "window_page", broken)
    with caplog.at_level(logging.ERROR, logger="knowledgeweb.web.rendering.receivers"):
        message_append(thread=thread, type="human", content="Still written?")

    assert Message.objects.filter(thread=thread, content="Still written?").exists()
    assert "was not stored; it is assembled per view" in caplog.text
    # The old page is left, out of date, and never served: the view assembles the window.
    assert StoredPage.objects.get(thread=thread).revision == before.revision
    monkeypatch.undo()
    assert "Still written?" in _page(logged_in(owner), thread)


def test_an_empty_thread_stores_no_page_and_its_view_says_so(owner: User) -> None:
    from knowledgeweb.threads.services import thread_create

    thread = thread_create(owner=owner, title="Empty")

    assert not StoredPage.objects.filter(thread=thread).exists()
    assert "This thread has no messages yet." in _page(logged_in(owner), thread)


def _verdict_reads(client: Client, thread: Thread) -> tuple[str, list[str]]:
    with CaptureQueriesContext(connection) as queries:
        served = _page(client, thread)
    return served, [q["sql"] for q in queries if "review_verdict" in q["sql"]]


def test_a_thread_never_judged_reads_no_verdicts(owner: User) -> None:
    thread = cited_thread(owner)
    assert Thread.objects.get(pk=thread.pk).verdict_revision == 0

    _, reads = _verdict_reads(logged_in(owner), thread)

    assert reads == []


def test_readers_who_see_every_verdict_are_served_the_stored_overlay_and_reviewers_their_own(
    owner: User,
) -> None:
    first, second = (User.objects.create_user(n, password=f"pw-{n}-1") for n in ("first", "second"))
    lead = User.objects.create_user("lead", password="pw-lead-1")
    thread = cited_thread(owner, citations=3)
    queue_for([owner], [first, second], lead=lead)
    judge(thread, first, "supports")
    judge(thread, second, ["does_not_support", "supports", "supports"])
    revision = Thread.objects.get(pk=thread.pk).verdict_revision
    assert revision == 8  # each of the 8 verdicts raised it
    assert StoredPage.objects.get(thread=thread).judged_revision == revision

    for reader in (owner, lead):
        client = logged_in(reader)
        served, reads = _verdict_reads(client, thread)
        assert reads == []  # the overlay was laid when the verdicts were written
        assert served.count('class="verdict-chip ') == 8
        # The same page as the chips laid per view.
        StoredPage.objects.filter(thread=thread).update(judged_revision=0)
        laid, reads = _verdict_reads(client, thread)
        StoredPage.objects.filter(thread=thread).update(judged_revision=revision)
        assert reads
        assert laid == served

    # A reviewer who has not judged sees nobody's verdicts; one who has sees the others' too.
    third = User.objects.create_user("third", password="pw-third-1")
    queue_for([owner], [third], name="Another")
    assert 'class="verdict-chip ' not in _page(logged_in(third), thread)
    assert _page(logged_in(first), thread).count('class="verdict-chip ') == 8


def test_a_verdict_deleted_by_any_path_is_never_shown_from_a_stored_overlay(owner: User) -> None:
    reviewer = User.objects.create_user("reviewer", password="pw-reviewer-1")
    thread = cited_thread(owner)
    queue_for([owner], [reviewer])
    judge(thread, reviewer, "does_not_support")
    client = logged_in(owner)
    assert 'data-verdict="does_not_support"' in _page(client, thread)

    reviewer.delete()  # the admin removes the reviewer: their verdicts go with them

    assert 'data-verdict="does_not_support"' not in _page(client, thread)


def test_threads_judged_before_verdict_revisions_start_at_one(owner: User) -> None:
    from django.apps import apps

    migration = importlib.import_module("knowledgeweb.review.migrations.0003_verdict_revisions")
    reviewer = User.objects.create_user("reviewer", password="pw-reviewer-1")
    judged, untouched = cited_thread(owner, title="Judged"), cited_thread(owner, title="Not judged")
    queue_for([owner], [reviewer])
    judge(judged, reviewer, "supports")
    Thread.objects.update(verdict_revision=0)

    migration.judged_threads_have_a_revision(apps, None)

    assert Thread.objects.get(pk=judged.pk).verdict_revision == 1
    assert Thread.objects.get(pk=untouched.pk).verdict_revision == 0
    assert 'data-verdict="supports"' in _page(logged_in(owner), judged)
