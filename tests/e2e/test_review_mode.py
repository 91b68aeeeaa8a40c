"""Review mode in Chromium (issue 26): a reviewer who owns nothing judges an agent's thread with
the keyboard only; a second reviewer is blind to the first's verdicts until judging; an outsider
gets 404 on the thread, the review API and the evidence route; axe finds nothing on the new
screens, light and dark, at 1280 and 390 px.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.contrib.auth.models import User
from django.test import Client
from playwright.sync_api import Browser, BrowserContext, Page, expect

from knowledgeweb.review.models import Verdict
from knowledgeweb.review.services import verdict_record
from tests.reviewing import ReviewWorld, review_world

pytestmark = pytest.mark.e2e

AXE = Axe()
SIZES = [(1280, "light"), (1280, "dark"), (390, "light"), (390, "dark")]
Open = Callable[..., Page]


@pytest.fixture
def world(live_server: Any) -> ReviewWorld:
    return review_world()


@pytest.fixture
def open_as(live_server: Any, new_context: Callable[..., BrowserContext]) -> Callable[..., Page]:
    """A page signed in as ``user`` (a session made by Django's test client, planted as a cookie)."""

    def _open(user: User, path: str, **options: Any) -> Page:
        client = Client()
        client.force_login(user)
        context = new_context(base_url=live_server.url, **options)
        context.add_cookies(
            [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
        )
        page = context.new_page()
        page.goto(path)
        return page

    return _open


def _review(world: ReviewWorld) -> str:
    return f"/threads/{world.thread.id}/review/"


def _current(page: Page) -> Any:
    return page.locator("[data-review-item].walk-current")


def test_a_reviewer_who_owns_nothing_judges_every_item_with_the_keyboard(
    world: ReviewWorld, open_as: Callable[..., Page]
) -> None:
    page = open_as(world.reviewer, f"/threads/{world.thread.id}/")
    # From the thread, by keyboard: the review link, then the items one key each.
    link = page.locator('[data-action="review"]')
    link.focus()
    page.keyboard.press("Enter")
    expect(page.locator('[data-page="review"]')).to_be_visible()
    expect(page.locator("[data-review-progress]")).to_have_text("judged 0 of 4")
    expect(page.locator("[data-guidelines-body] strong")).to_have_text("claim")
    page.keyboard.press("j")
    expect(_current(page)).to_have_attribute("data-item-kind", "citation")
    expect(page.locator("[data-walk-position]")).to_have_text("Item 1 of 6")
    page.keyboard.press("1")  # supports: posted, back at the next item
    expect(_current(page)).to_have_id(f"item-citation-{world.answer.id.hex}-2")
    page.keyboard.press("3")  # does not support
    expect(_current(page)).to_have_attribute("data-item-state", "unresolved")
    expect(_current(page).locator("form")).to_have_count(0)
    page.keyboard.press("j")
    expect(_current(page)).to_have_attribute("data-item-state", "malformed")
    page.keyboard.press("j")
    expect(_current(page)).to_have_id(f"item-answer-{world.answer.id.hex}")
    page.keyboard.press("n")
    page.keyboard.type("Cites a source for the Moon that was never retrieved.")
    page.keyboard.press("Escape")
    page.keyboard.press("2")  # needs changes, with the note
    expect(_current(page)).to_have_id(f"item-answer-{world.uncited.id.hex}")
    page.keyboard.press("k")
    page.keyboard.press("j")
    page.keyboard.press("1")  # acceptable
    expect(page.locator("[data-review-progress]")).to_contain_text("judged 4 of 4")
    got = {(v.kind, v.position, v.value, v.note) for v in Verdict.objects.filter(reviewer=world.reviewer)}
    assert got == {
        ("citation", 1, "supports", ""),
        ("citation", 2, "does_not_support", ""),
        ("answer", 0, "needs_changes", "Cites a source for the Moon that was never retrieved."),
        ("answer", 0, "acceptable", ""),
    }
    # The thread page shows the chips laid over its citations, with a word, not colour alone.
    page.goto(f"/threads/{world.thread.id}/")
    chip = page.locator(f'[data-verdict-chips="citation-{world.answer.id.hex}-1"] .verdict-chip')
    expect(chip).to_contain_text("supports")
    expect(page.locator('[data-action="delete"]')).to_have_count(0)
    expect(page.locator("[data-follow-up], form[action$='/ask/']")).to_have_count(0)


def test_a_second_reviewer_sees_the_first_ones_verdicts_only_after_judging(
    world: ReviewWorld, open_as: Callable[..., Page]
) -> None:
    verdict_record(
        reviewer=world.reviewer,
        thread_id=world.thread.id,
        message_id=world.answer.id,
        kind="citation",
        position=1,
        value="does_not_support",
        note="Says the opposite.",
    )
    page = open_as(world.second, _review(world))
    first = page.locator(f"#item-citation-{world.answer.id.hex}-1")
    expect(first.locator("[data-verdicts-hidden]")).to_have_text(
        "1 other reviewer judged this item; their verdicts show once you judge it."
    )
    expect(page.get_by_text("Says the opposite.")).to_have_count(0)
    page.goto(f"/threads/{world.thread.id}/")
    expect(page.locator(".verdict-chip")).to_have_count(0)
    page.goto(_review(world))
    page.keyboard.press("j")
    page.keyboard.press("1")
    expect(first.locator(".verdict-chip")).to_have_count(2)
    expect(first.get_by_text("Says the opposite.")).to_be_visible()


def test_an_outsider_gets_404_on_the_thread_the_review_api_and_the_evidence(
    world: ReviewWorld, open_as: Callable[..., Page]
) -> None:
    page = open_as(world.outsider, "/")
    for path in (
        f"/threads/{world.thread.id}/",
        _review(world),
        f"/threads/{world.thread.id}/evidence/{world.answer.id}/1/",
        f"/api/threads/{world.thread.id}/review",
    ):
        response = page.goto(path)
        assert response is not None
        assert response.status == 404, path
    assert "Gettysburg" not in page.content()


def _violations(page: Page) -> list[str]:
    results = AXE.run(page)
    return [
        f"{v['id']} ({v['impact']}): " + "; ".join(" ".join(node["target"]) for node in v["nodes"][:3])
        for v in results.response["violations"]
    ]


@pytest.mark.parametrize(("width", "scheme"), SIZES)
def test_the_review_screens_have_no_axe_violations(
    world: ReviewWorld, open_as: Callable[..., Page], browser: Browser, width: int, scheme: str
) -> None:
    for value, position in (("supports", 1), ("partly_supports", 2)):
        verdict_record(
            reviewer=world.reviewer,
            thread_id=world.thread.id,
            message_id=world.answer.id,
            kind="citation",
            position=position,
            value=value,
            note="<script>alert(1)</script> looks fine",
        )
    screen = {"viewport": {"width": width, "height": 900}, "color_scheme": scheme}
    page = open_as(world.reviewer, _review(world), **screen)
    found: dict[str, list[str]] = {}
    screens = {
        "review mode": _review(world),
        "review mode, guidelines open": _review(world),
        "evidence": f"/threads/{world.thread.id}/evidence/{world.answer.id}/1/",
        "thread with chips": f"/threads/{world.thread.id}/",
        "delete with verdicts": f"/threads/{world.thread.id}/delete/",
    }
    for name, path in screens.items():
        viewer = world.owner if name == "delete with verdicts" else world.reviewer
        if viewer is not world.reviewer:
            page = open_as(viewer, path, **screen)
        else:
            page.goto(path)
        if name.endswith("guidelines open"):
            page.locator("[data-guidelines] summary").click()
            page.keyboard.press("j")
        problems = _violations(page)
        if problems:
            found[name] = problems
    assert found == {}, found
    assert page.evaluate("() => window.__xss === undefined")
