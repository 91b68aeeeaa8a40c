"""The reader's walk, words and phone targets (issue 24), in Debian's Chromium.

A thread with every kind of problem (``problems_thread``): a label naming another source, a
citation with no source, a malformed one, one whose evidence came only later, and an answer that
cites nothing. Every problem is reachable by the walk with the mouse and with the keyboard,
with "n of m"; the reason opens on arrival.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from tests.e2e.review_scenarios import Problems, problems_thread
from tests.e2e.watching import Watched

pytestmark = pytest.mark.e2e

Opener = Callable[..., tuple[Page, Watched]]
RESOLVED = 'a.citation[data-citation="resolved"]'
AXE = Axe()


def _stops(page: Page, problems: Problems) -> list[Any]:
    answers = page.locator('[data-message-type="ai"]')
    return [
        answers.nth(0).locator(f'{RESOLVED}[href="#{problems.review.speech}"]'),
        page.locator('button.citation[data-citation="unresolved"]').nth(0),
        page.locator('button.citation[data-citation="malformed"]'),
        page.locator('button.citation[data-citation="unresolved"]').nth(1),
        page.locator('[data-issue="uncited"]'),
    ]


def _expect_arrived(page: Page, stops: list[Any], n: int) -> None:
    target = stops[n - 1]
    expect(target).to_be_focused()
    expect(target).to_be_in_viewport()
    expect(target).to_have_class(re.compile(r"\bwalk-current\b"))
    expect(page.locator("[data-walk-position]")).to_have_text(f"{n} of 5")
    expect(page.locator(".walk-current")).to_have_count(1)
    # Only this stop's reason is open: the last one's closed when the walk moved on.
    expect(page.locator(".citation-reason:popover-open")).to_have_count(1 if n in (2, 3, 4) else 0)
    # The reason is open on arrival.
    if n == 1:
        preview = page.locator("[data-citation-preview]")
        expect(preview).to_be_visible()
        expect(preview.locator('[data-preview-field="mismatch"]')).to_have_text(
            "Label names another source: the answer labelled this citation “NASA Earth Fact Sheet, 2024”."
        )
    elif n in (2, 3, 4):
        reason = page.locator(f'[id="{target.get_attribute("popovertarget")}"]')
        expect(reason).to_be_visible()
    else:
        expect(target).to_contain_text("no citations")


def test_every_problem_is_reachable_by_the_walk_with_the_mouse(
    open_page: Opener, reader: tuple[User, Any]
) -> None:
    problems = problems_thread(reader[0])
    page, watched = open_page(f"/threads/{problems.review.thread.id}/")
    expect(page.locator("[data-citation-tally]")).to_have_text(
        re.compile(
            r"^\s*3 source found · 2 no source · 1 malformed · 1 label names another source"
            r" · 1 answer without citations\s*$"
        )
    )
    expect(page.locator("[data-walk-position]")).to_have_text("5 issues to review")
    stops = _stops(page, problems)
    walk = page.locator("[data-issue-walk]")
    for n in range(1, 6):
        walk.locator('[data-walk="next"]').click()
        _expect_arrived(page, stops, n)
    # The later evidence is named and linked.
    later = page.locator(f'[id="{stops[3].get_attribute("popovertarget")}"]')
    expect(later).to_contain_text(
        "Its evidence was retrieved only later, in the knowledge_search result, message"
    )
    expect(later.locator("a[data-reason-later]")).to_have_count(1)
    walk.locator('[data-walk="next"]').click()  # wraps around
    _expect_arrived(page, stops, 1)
    walk.locator('[data-walk="previous"]').click()
    _expect_arrived(page, stops, 5)
    walk.locator('[data-walk="previous"]').click()
    _expect_arrived(page, stops, 4)
    assert watched.errors == []


def test_every_problem_is_reachable_by_the_walk_with_the_keyboard(
    open_page: Opener, reader: tuple[User, Any]
) -> None:
    problems = problems_thread(reader[0])
    page, watched = open_page(f"/threads/{problems.review.thread.id}/")
    stops = _stops(page, problems)
    page.locator('[data-issue-walk] [data-walk="next"]').focus()
    page.keyboard.press("Enter")
    _expect_arrived(page, stops, 1)
    for n in range(2, 6):
        page.keyboard.press("n")
        _expect_arrived(page, stops, n)
    page.keyboard.press("p")
    _expect_arrived(page, stops, 4)
    # The walk goes on from where it is, and wraps around.
    page.keyboard.press("n")
    page.keyboard.press("n")
    _expect_arrived(page, stops, 1)
    assert watched.errors == []


def test_the_label_mismatch_is_announced_and_its_label_stays_in_the_claim(
    open_page: Opener, reader: tuple[User, Any]
) -> None:
    problems = problems_thread(reader[0])
    page, watched = open_page(f"/threads/{problems.review.thread.id}/")
    mismatch = _stops(page, problems)[0]
    expect(mismatch).to_have_accessible_name(re.compile(r"\(label names another source\)\s*$"))
    expect(mismatch.locator(".citation-flag")).to_be_visible()
    mismatch.click()
    dialog = page.locator("dialog[data-citation-dialog]")
    expect(dialog).to_be_visible()
    # The claim as the answer wrote it, its own label kept.
    expect(dialog.locator('[data-dialog-field="claim"]')).to_contain_text("NASA Earth Fact Sheet, 2024")
    assert watched.errors == []


def test_a_source_list_opens_the_dialog_with_each_claim_citing_it_and_its_passage(
    open_page: Opener, reader: tuple[User, Any]
) -> None:
    problems = problems_thread(reader[0])
    page, watched = open_page(f"/threads/{problems.review.thread.id}/")
    second = page.locator('[data-message-type="ai"]').nth(1)
    second.locator(f'a[data-answer-source][href="#{problems.review.speech}"]').click()
    dialog = page.locator("dialog[data-citation-dialog]")
    expect(dialog).to_be_visible()
    expect(dialog.locator('[data-dialog-row="claim"]')).to_be_hidden()  # no made-up claim
    claims = dialog.locator('[data-dialog-field="claims"] li')
    expect(claims).to_have_count(1)
    expect(claims.first.locator("q")).to_have_text("He spoke at the cemetery.")
    page.keyboard.press("Escape")
    # From the panel: every claim of the thread citing the source, each with its own passage.
    page.locator(f'[data-sources-panel] a[data-panel-source][href="#{problems.review.speech}"]').click()
    expect(dialog).to_be_visible()
    expect(dialog.locator('[data-dialog-field="claims-heading"]')).to_have_text(
        "Claims of this thread that cite this source"
    )
    expect(claims.locator("q")).to_have_text(
        ["Lincoln said that they had met on a battle-field of that war.", "He spoke at the cemetery."]
    )
    expect(claims.nth(0).locator("mark")).to_have_text([problems.review.closest])
    expect(claims.nth(1).locator("mark")).to_have_count(0)
    assert watched.errors == []


def test_on_a_phone_close_is_one_line_and_every_citation_target_is_at_least_24_px(
    open_page: Opener, reader: tuple[User, Any]
) -> None:
    problems = problems_thread(reader[0])
    page, watched = open_page(
        f"/threads/{problems.review.thread.id}/", has_touch=True, viewport={"width": 390, "height": 844}
    )
    sizes = page.evaluate(
        """() => [...document.querySelectorAll("[data-messages] a.citation, [data-messages] button.citation")]
            .map((el) => { const r = el.getBoundingClientRect(); return [r.width, r.height]; })"""
    )
    assert len(sizes) == 6  # three found (one mismatched), two no source, one malformed
    assert all(w >= 24 and h >= 24 for w, h in sizes), sizes
    page.locator(RESOLVED).first.tap()
    close = page.locator("[data-dialog-close]")
    expect(close).to_be_visible()
    lines = page.evaluate(
        """() => { const b = document.querySelector("[data-dialog-close]"); const r = document.createRange();
            r.selectNodeContents(b); const tops = new Set([...r.getClientRects()].map((x) => Math.round(x.top)));
            const box = b.getBoundingClientRect(); return [tops.size, box.width, box.height]; }"""
    )
    assert lines[0] == 1, lines
    assert lines[1] >= 44
    assert lines[2] >= 44
    # The document opens with its title and the marked passage both in view, on a phone too.
    page.locator('dialog[data-citation-dialog] [data-dialog-field="document"]').tap()
    expect(page.locator("#passage mark")).to_be_in_viewport()
    expect(page.locator("#document-title")).to_be_in_viewport()
    expect(page.locator('[data-action="back-to-citation"]')).to_be_in_viewport()
    assert watched.errors == []


@pytest.mark.parametrize(
    ("width", "scheme"), [(1280, "light"), (1280, "dark"), (390, "light"), (390, "dark")]
)
def test_the_changed_pages_have_no_axe_violations(
    open_page: Opener, reader: tuple[User, Any], width: int, scheme: str
) -> None:
    problems = problems_thread(reader[0])
    thread = problems.review.thread
    page, watched = open_page("/", viewport={"width": width, "height": 900}, color_scheme=scheme)
    found: dict[str, list[str]] = {}

    def check(name: str) -> None:
        results = AXE.run(page)
        violations = [
            f"{v['id']} ({v['impact']}): " + "; ".join(" ".join(n["target"]) for n in v["nodes"][:3])
            for v in results.response["violations"]
        ]
        if violations:
            found[name] = violations

    page.goto(f"/threads/{thread.id}/")
    check("problems thread")
    page.locator('[data-issue-walk] [data-walk="next"]').click()
    page.keyboard.press("n")
    expect(page.locator("[data-walk-position]")).to_have_text("2 of 5")
    check("walk at a reason")
    page.keyboard.press("Escape")
    second = page.locator('[data-message-type="ai"]').nth(1)
    second.locator(f'a[data-answer-source][href="#{problems.review.speech}"]').click()
    expect(page.locator("dialog[data-citation-dialog]")).to_be_visible()
    check("source list dialog")
    page.keyboard.press("Escape")
    page.locator(RESOLVED).first.click()
    document = page.locator('dialog[data-citation-dialog] [data-dialog-field="document"]')
    expect(document).to_be_visible()
    document.click()
    expect(page.locator("[data-document-citing]")).to_be_visible()
    check("document passage from a citation")
    page.goto("/?q=battle-field")
    expect(page.locator("[data-snippet]").first).to_be_visible()
    check("thread list search")
    assert found == {}
    assert watched.errors == []
