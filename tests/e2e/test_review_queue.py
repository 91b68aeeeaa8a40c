"""Two reviewers and a lead work an overlap-2 queue in a real browser (issue 27).

Both reviewers press "Start reviewing" and are handed the same thread (the overlap lets two
hold it), they disagree on one citation, the lead records a final verdict on the disputed
item, and the queue's progress moves. axe finds nothing on the queue pages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from playwright.sync_api import BrowserContext, Page, expect

from knowledgeweb.review.models import FinalVerdict, Reservation, Verdict
from tests.factories import UserFactory
from tests.review_queues import cited_thread, items_of, judge, queue_for

pytestmark = pytest.mark.e2e


def _page_as(user: User, live_server: Any, new_context: Callable[..., BrowserContext], **screen: Any) -> Page:
    """A browser page carrying ``user``'s real session cookie (``screen``: viewport, colour scheme)."""
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    context = new_context(base_url=live_server.url, **screen)
    context.add_cookies(
        [{"name": cookie.key, "value": cookie.value, "url": live_server.url, "httpOnly": True}]
    )
    return context.new_page()


def _no_axe_findings(page: Page) -> None:
    violations = Axe().run(page).response["violations"]
    assert [(v["id"], [n["html"] for n in v["nodes"]]) for v in violations] == []


def _judge(page: Page, item: str, key: str) -> None:
    card = page.locator(f'[data-review-item="{item}"]')
    card.locator(f'button[data-verdict-key="{key}"]').click()
    page.wait_for_load_state()


def _start(page: Page, queue_id: int) -> None:
    page.goto("/review/")
    page.locator(f'[data-queue-id="{queue_id}"] [data-action="start-reviewing"]').click()
    page.wait_for_url("**/review/")


def test_two_reviewers_disagree_and_the_lead_settles_it_as_progress_moves(
    live_server: Any, new_context: Callable[..., BrowserContext]
) -> None:
    agent = UserFactory.create(username="agent")
    alice, bob, lead = (UserFactory.create(username=n) for n in ("alice", "bob", "lead"))
    thread = cited_thread(agent, title="Refund policy", citations=2)
    queue = queue_for([agent], [alice, bob], overlap=2, lead=lead, name="Support answers")
    message = items_of(thread)[0].key.message_id.hex
    first, second, answer = f"citation-{message}-1", f"citation-{message}-2", f"answer-{message}"

    alice_page = _page_as(alice, live_server, new_context)
    alice_page.goto("/review/")
    expect(alice_page.locator('[data-progress="items"]')).to_have_text("0 of 3 items done")
    _no_axe_findings(alice_page)
    _start(alice_page, queue.pk)
    assert alice_page.url.endswith(f"/threads/{thread.id}/review/")

    bob_page = _page_as(bob, live_server, new_context)
    _start(bob_page, queue.pk)
    assert bob_page.url.endswith(f"/threads/{thread.id}/review/")  # the same thread: overlap 2
    holders = Reservation.objects.filter(queue=queue, thread=thread, reviewer__isnull=False)
    assert set(holders.values_list("reviewer__username", flat=True)) == {"alice", "bob"}

    for item, key in ((first, "1"), (second, "1"), (answer, "1")):
        _judge(alice_page, item, key)
    for item, key in ((first, "1"), (second, "3"), (answer, "1")):  # "does not support" on the second
        _judge(bob_page, item, key)
    assert Verdict.objects.count() == 6

    lead_page = _page_as(lead, live_server, new_context)
    lead_page.goto(f"/review/{queue.pk}/")
    expect(lead_page.locator('[data-progress="items"]')).to_have_text("3 of 3 items done")
    expect(lead_page.locator('[data-progress="threads"]')).to_have_text("1 of 1 thread done")
    dispute = lead_page.locator(f'[data-dispute="{second}"]')
    expect(dispute).to_contain_text("alice: supports")
    expect(dispute).to_contain_text("bob: does not support")
    _no_axe_findings(lead_page)
    dispute.get_by_label("partly supports").check()
    dispute.get_by_label("Note (optional)").fill("The passage covers half of the claim.")
    dispute.locator('[data-action="record-final"]').click()
    expect(lead_page.locator(f'[data-dispute="{second}"] [data-final]')).to_have_text(
        "Final verdict: partly supports"
    )
    assert FinalVerdict.objects.get().value == "partly_supports"
    _no_axe_findings(lead_page)

    alice_page.goto("/review/")
    expect(alice_page.locator('[data-progress="threads"]')).to_have_text("1 of 1 thread done")
    expect(alice_page.locator('[data-reviewer="bob"]')).to_have_text("bob: 3 judged")


SIZES = [(1280, "light"), (1280, "dark"), (390, "light"), (390, "dark")]


@pytest.mark.parametrize(("width", "scheme"), SIZES)
def test_the_queue_pages_have_no_axe_violations(
    live_server: Any, new_context: Callable[..., BrowserContext], width: int, scheme: str
) -> None:
    """Every queue screen with something on it: the list with progress, the lead's queue page
    with agreement, a dispute and its final-verdict form, a settled dispute, and the thread
    list's review filters with each thread's state."""
    agent = UserFactory.create(username="agent")
    alice, bob, lead = (UserFactory.create(username=n) for n in ("alice", "bob", "lead"))
    disputed = cited_thread(agent, title="Refund policy", citations=2)
    settled = cited_thread(agent, title="Shipping times", citations=2)
    cited_thread(agent, title="Returns", citations=1)  # nobody judged it yet
    queue = queue_for([agent], [alice, bob], overlap=2, lead=lead, name="Support answers")
    judge(disputed, alice, "supports")
    judge(disputed, bob, ["supports", "does_not_support"])
    judge(settled, alice, "supports")
    judge(settled, bob, "supports")
    screen = {"viewport": {"width": width, "height": 900}, "color_scheme": scheme}

    found: dict[str, list[tuple[str, list[str]]]] = {}
    for user, path, shows in (
        (alice, "/review/", "Support answers"),
        (alice, "/?review=mine", "Returns"),
        (alice, "/?review=does-not-support", "Refund policy"),
        (alice, "/?review=disputed", "Refund policy"),
        (lead, "/review/", "Support answers"),
        (lead, f"/review/{queue.pk}/", "bob: does not support"),
    ):
        page = _page_as(user, live_server, new_context, **screen)
        page.goto(path)
        expect(page.locator("main")).to_contain_text(shows)
        violations = Axe().run(page).response["violations"]
        if violations:
            found[f"{user.username} {path}"] = [
                (v["id"], [n["html"] for n in v["nodes"]]) for v in violations
            ]
    assert found == {}
