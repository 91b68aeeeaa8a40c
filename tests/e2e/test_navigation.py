"""Finding your way, in a real browser: keyboard only, on a 390 px phone, in the dark theme.

The thread list (order, pages, search, verdicts, deletion), the outline of a long
thread, the sources from each answer on a phone, the preview card on touch, the
320 px reflow of every page, and the Ask page's focus, busy state and failures.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from playwright.sync_api import Browser, Page, expect

from knowledgeweb.library.provider import LocalProvider
from knowledgeweb.providers.errors import ProviderTimeoutError
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.services import thread_create
from tests.e2e.navigation_scenarios import LONG_URL, demo_threads, long_thread
from tests.e2e.scenarios import verified_thread
from tests.e2e.watching import Watched, times_shown, watch_shown

pytestmark = pytest.mark.e2e

OpenPage = Callable[..., tuple[Page, Watched]]
PHONE_DARK: dict[str, Any] = {"viewport": {"width": 390, "height": 844}, "color_scheme": "dark"}
TOUCH_PHONE: dict[str, Any] = {**PHONE_DARK, "has_touch": True, "is_mobile": True}
RESOLVED = 'a.citation[data-citation="resolved"]'


def _tab_to(page: Page, selector: str, limit: int = 80) -> None:
    """Press Tab until the focused element matches ``selector`` (keyboard only)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("s => document.activeElement && document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"Tab never reached {selector}")


def _no_sideways_scroll(page: Page, width: int) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= width, page.url


# ---- 1. the thread list ------------------------------------------------------


def test_keyboard_only_on_a_phone_the_list_pages_newest_first_and_searches(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    owner = reader[0]
    base = timezone.now() - timedelta(days=1)
    for n in range(60):
        thread = thread_create(owner=owner, title=f"Thread {n:02d}")
        Thread.objects.filter(pk=thread.pk).update(
            updated_at=base + timedelta(minutes=n), citations_resolved=n, citations_unresolved=1
        )
    page, watched = open_page("/", **PHONE_DARK)

    titles = page.locator("[data-thread-list] .thread-link")
    expect(titles).to_have_count(50)
    expect(titles.first).to_have_text("Thread 59")
    first_row = page.locator("[data-thread-list] > li").first
    expect(first_row.locator('[data-verdict="resolved"]')).to_have_text("59 source found")
    expect(first_row.locator('[data-verdict="unresolved"]')).to_have_text("1 no source")
    expect(first_row.locator('[data-verdict="malformed"]')).to_have_text("0 malformed")

    _tab_to(page, '[data-page-link="next"]')
    page.keyboard.press("Enter")
    expect(titles).to_have_count(10)
    expect(titles.first).to_have_text("Thread 09")
    expect(titles.last).to_have_text("Thread 00")

    _tab_to(page, "#thread-search-q")
    page.keyboard.type("thread 4")
    page.keyboard.press("Enter")
    expect(titles).to_have_text([f"Thread {n}" for n in range(49, 39, -1)])
    expect(page.locator("[data-list-summary]")).to_contain_text("10 threads match “thread 4”.")
    _no_sideways_scroll(page, 390)
    assert watched.errors == []


def test_keyboard_only_a_thread_is_deleted_after_confirmation_and_others_stay(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    owner = reader[0]
    doomed = verified_thread(owner).thread
    kept = thread_create(owner=owner, title="Keep me")
    page, watched = open_page(f"/threads/{doomed.id}/", **PHONE_DARK)

    _tab_to(page, '[data-action="delete"]')
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_have_text("Delete this thread?")
    assert Thread.objects.filter(pk=doomed.pk).exists()  # asking is not deleting

    _tab_to(page, '[data-action="delete-thread"]')
    page.keyboard.press("Enter")
    expect(page.locator("[data-notices]")).to_contain_text("Deleted the thread “Why cats purr”.")
    expect(page.locator(f'[data-thread-id="{doomed.id}"]')).to_have_count(0)
    expect(page.locator(f'[data-thread-id="{kept.id}"]')).to_have_count(1)
    assert not Thread.objects.filter(pk=doomed.pk).exists()
    assert not Message.objects.filter(thread_id=doomed.id).exists()
    assert watched.errors == []


# ---- 2. long threads ---------------------------------------------------------


def test_keyboard_only_the_outline_jumps_to_a_question_and_headings_nest(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    thread = long_thread(reader[0], turns=30)
    page, watched = open_page(f"/threads/{thread.id}/", **PHONE_DARK)

    _tab_to(page, "[data-outline] summary")
    page.keyboard.press("Enter")
    links = page.locator("[data-outline-link]")
    expect(links).to_have_count(30)
    expect(links.nth(24)).to_have_text("Question about topic 25: what does source 25 say?")
    _tab_to(page, '[data-outline-link="25"]')
    page.keyboard.press("Enter")

    expect(page).to_have_url(re.compile("#turn-25$"))
    heading = page.locator("#turn-25 h2")
    expect(heading).to_be_in_viewport()
    expect(heading).to_have_text(re.compile(r"Question 25\s+Question about topic 25"))

    levels = page.evaluate(
        "[...document.querySelectorAll('main h1, main h2, main h3, main h4, main h5, main h6')]"
        ".filter(h => h.getClientRects().length).map(h => Number(h.tagName[1]))"
    )
    assert levels[0] == 1
    assert levels.count(1) == 1
    assert all(b - a <= 1 for a, b in itertools.pairwise(levels)), levels
    # An answer's own "# Summary" sits below its question's heading.
    expect(page.locator("#turn-3 ~ li h3", has_text="Summary 3").first).to_be_attached()
    assert watched.errors == []


# ---- 3. phones: sources from each answer, the preview card --------------------


def test_on_a_phone_each_answer_reaches_its_sources_without_scrolling_the_thread(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    thread = long_thread(reader[0], turns=12)
    page, watched = open_page(f"/threads/{thread.id}/", **TOUCH_PHONE)

    answer = page.locator('[data-message-type="ai"]').nth(6)
    sources = answer.locator("[data-answer-sources]")
    expect(sources).to_be_visible()  # under the answer, never folded
    link = sources.locator("a[data-answer-source]")
    expect(link).to_have_text("[7] Source 7")
    link.tap()

    dialog = page.locator("dialog[data-citation-dialog]")
    expect(dialog).to_be_visible()
    expect(dialog.locator('[data-dialog-field="title"]')).to_have_text("Source 7")
    dialog.locator("[data-dialog-close]").tap()
    expect(dialog).to_be_hidden()
    expect(page.locator("[data-citation-preview]")).to_be_hidden()
    expect(link).to_be_in_viewport()  # still where the reader was
    assert watched.errors == []


def test_the_sources_of_an_answer_work_keyboard_only_and_without_javascript(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    thread = long_thread(reader[0], turns=3)
    page, _ = open_page(f"/threads/{thread.id}/", javascript=False, **PHONE_DARK)

    _tab_to(page, "a[data-answer-source]")
    page.keyboard.press("Enter")

    target = page.locator(":target")
    expect(target).to_have_attribute("data-source-entry", "")
    expect(target.locator('[data-field="title"]')).to_have_text("Source 1")
    expect(target).to_be_in_viewport()


def test_on_touch_a_tap_opens_the_source_and_no_card_reopens_after_closing(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    verified = verified_thread(reader[0])
    page, watched = open_page(f"/threads/{verified.thread.id}/", **TOUCH_PHONE)
    preview = page.locator("[data-citation-preview]")
    dialog = page.locator("dialog[data-citation-dialog]")

    first = page.locator(RESOLVED).first

    first.tap()
    expect(dialog).to_be_visible()
    expect(preview).to_be_hidden()
    watch_shown(page, "[data-citation-preview]")
    dialog.locator("[data-dialog-close]").tap()
    expect(dialog).to_be_hidden()
    # The dialog's close handler puts focus back on the citation: that focus is what would
    # reopen the card, and once the citation has it the handler has run to its end.
    expect(first).to_be_focused()
    assert times_shown(page, "[data-citation-preview]") == 0
    expect(preview).to_be_hidden()
    assert watched.errors == []


def test_the_card_never_reopens_after_the_dialog_closes_and_closes_on_an_outside_tap(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    verified = verified_thread(reader[0])
    page, watched = open_page(f"/threads/{verified.thread.id}/", **PHONE_DARK)
    preview = page.locator("[data-citation-preview]")
    dialog = page.locator("dialog[data-citation-dialog]")
    first = page.locator(RESOLVED).first

    _tab_to(page, RESOLVED)
    expect(preview).to_be_visible()
    page.keyboard.press("Enter")
    expect(dialog).to_be_visible()
    watch_shown(page, "[data-citation-preview]")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    # Focus back on the citation: the close handler that could reopen the card has run.
    expect(first).to_be_focused()
    assert times_shown(page, "[data-citation-preview]") == 0  # focus came back; the card did not
    expect(preview).to_be_hidden()

    # Moving on and back shows it again; a tap elsewhere closes it.
    page.keyboard.press("Tab")
    page.keyboard.press("Shift+Tab")
    expect(first).to_be_focused()
    expect(preview).to_be_visible()
    page.mouse.click(5, 400)
    expect(preview).to_be_hidden()
    assert watched.errors == []


def test_a_tap_on_the_card_opens_its_source_and_never_reaches_what_lies_beneath(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    verified = verified_thread(reader[0])
    page, watched = open_page(f"/threads/{verified.thread.id}/", **TOUCH_PHONE)
    preview = page.locator("[data-citation-preview]")
    url = page.url

    _tab_to(page, RESOLVED)  # an external keyboard on a phone shows the card
    expect(preview).to_be_visible()
    box = preview.bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    beneath = page.evaluate(
        "([x, y]) => { const card = document.querySelector('[data-citation-preview]');"
        " card.hidden = true; const el = document.elementFromPoint(x, y); card.hidden = false;"
        " return el ? el.tagName : null; }",
        [x, y],
    )
    assert beneath is not None
    assert page.evaluate(
        "([x, y]) => document.elementFromPoint(x, y).closest('[data-citation-preview]') !== null", [x, y]
    )

    page.touchscreen.tap(x, y)

    dialog = page.locator("dialog[data-citation-dialog]")
    expect(dialog).to_be_visible()
    expect(dialog.locator('[data-dialog-field="title"]')).to_have_text(verified.shared.title)
    assert page.url == url
    assert watched.errors == []


# ---- 4. layout: nothing scrolls sideways at 320 px ----------------------------


def test_no_page_scrolls_sideways_at_320_px(
    reader: tuple[User, Any],
    open_page: OpenPage,
    monkeypatch: pytest.MonkeyPatch,
    browser: Browser,
    live_server: Any,
) -> None:
    owner = reader[0]
    long_one = long_thread(owner, turns=4)
    thread_create(owner=owner, title="A title with no spaces " + "x" * 170)
    demos = demo_threads(owner)
    narrow: dict[str, Any] = {"viewport": {"width": 320, "height": 640}, "color_scheme": "dark"}
    page, watched = open_page("/", **narrow)
    paths = [
        "/",
        "/?q=" + "y" * 150,
        f"/threads/{long_one.id}/",
        f"/threads/{long_one.id}/delete/",
        *[f"/threads/{t.id}/" for t in demos],
        "/ask/",
        "/threads/00000000-0000-0000-0000-000000000000/",
    ]
    for path in paths:
        page.goto(path)
        _no_sideways_scroll(page, 320)

    monkeypatch.setattr(LocalProvider, "search", _timeout)
    page.goto("/ask/")
    page.locator('[data-field="question"]').fill(f"What is at {LONG_URL}?")
    page.locator('[data-action="ask"]').click()
    expect(page.locator('[data-ask-error="provider"]')).to_be_visible()
    page.locator("[data-error-detail] summary").click()
    _no_sideways_scroll(page, 320)

    page.goto(f"/threads/{long_one.id}/")
    page.locator(RESOLVED).first.click()
    expect(page.locator("dialog[data-citation-dialog]")).to_be_visible()
    _no_sideways_scroll(page, 320)
    assert [e for e in watched.errors if "Failed to load resource" not in e] == []

    anonymous = browser.new_context(base_url=live_server.url, **narrow)
    login = anonymous.new_page()
    login.goto("/accounts/login/")
    _no_sideways_scroll(login, 320)
    anonymous.close()


# ---- 6. Ask --------------------------------------------------------------------


def _timeout(self: LocalProvider, query: str, **_: object) -> None:
    raise ProviderTimeoutError("ReadTimeout: the read operation timed out")


def test_keyboard_only_ask_focuses_the_question_shows_progress_and_opens_the_answer(
    reader: tuple[User, Any], open_page: OpenPage, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo_threads(reader[0])
    started = threading.Event()
    reported = threading.Event()
    real_search = LocalProvider.search

    def held(self: LocalProvider, query: str, **options: Any) -> Any:
        # The search answers once the page has reported its busy state, not after a guess
        # at how long that takes.
        started.set()
        if not reported.wait(30):
            raise ProviderTimeoutError("the page never reported its busy state")
        return real_search(self, query, **options)

    monkeypatch.setattr(LocalProvider, "search", held)
    page, watched = open_page("/ask/", **PHONE_DARK)

    question = page.locator('[data-field="question"]')
    expect(question).to_be_focused()
    expect(page.locator("[data-source-title]")).to_have_text("Sample corpus")
    expect(page.locator("[data-source-description]")).to_contain_text("The demo documents")
    page.keyboard.type("government of the people")
    captured: list[list[Any]] = []

    def report_busy(state: list[Any]) -> None:
        captured.append(state)
        reported.set()

    page.expose_function("reportBusy", report_busy)
    page.evaluate(
        "() => document.addEventListener('submit', () => setTimeout(() => {"
        " const b = document.querySelector('[data-action=\"ask\"]');"
        " window.reportBusy([b.disabled, b.textContent,"
        " document.querySelector('[data-ask-status]').textContent,"
        " document.querySelector('[data-form=\"ask\"]').getAttribute('aria-busy')]); }, 50))"
    )
    _tab_to(page, '[data-action="ask"]')
    page.keyboard.press("Enter")

    assert started.wait(10)

    answer = page.locator('[data-message-type="ai"]')
    expect(answer).to_contain_text("government of the people, by the people, for the people")
    expect(answer).to_contain_text("shall not perish from the earth.")
    expect(answer.locator(RESOLVED)).to_have_count(1)
    # What the page showed while the POST was pending (reported from the page itself just
    # after the submit handlers ran; Playwright delivers the report during the calls above).
    assert len(captured) == 1
    disabled, text, status, busy = captured[0]
    assert disabled is True
    assert text == "Searching…"
    assert status.startswith("Searching “Sample corpus” and composing the answer.")
    assert busy == "true"
    assert watched.errors == []


def test_without_javascript_ask_still_posts_and_opens_the_answer(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    demo_threads(reader[0])
    page, _ = open_page("/ask/", javascript=False, **PHONE_DARK)

    page.locator('[data-field="question"]').fill("What is the boiling point of mercury in kelvin?")
    page.locator('[data-action="ask"]').click()

    expect(page).to_have_url(re.compile(r"/threads/[0-9a-f-]{36}/$"))
    answer = page.locator('[data-message-type="ai"]')
    expect(answer).to_have_text(re.compile("None of the retrieved passages answers this question."))
    expect(answer.locator(".citation")).to_have_count(0)


def test_a_slow_source_fails_in_plain_language_keeping_the_question_with_the_detail_one_key_away(
    reader: tuple[User, Any], open_page: OpenPage, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo_threads(reader[0])
    monkeypatch.setattr(LocalProvider, "search", _timeout)
    page, watched = open_page("/ask/", **PHONE_DARK)

    # Typing before the box has taken its autofocus would lose the first keys.
    expect(page.locator('[data-field="question"]')).to_be_focused()
    page.keyboard.type("How are search results ranked?")
    _tab_to(page, '[data-action="ask"]')
    page.keyboard.press("Enter")

    error = page.locator('[data-ask-error="provider"]')
    expect(error).to_have_text(
        "The source 'Sample corpus' did not answer within 30 seconds. Try again, or pick another source."
    )
    expect(page.locator('[data-field="question"]')).to_have_value("How are search results ranked?")
    detail = page.locator("[data-error-detail]")
    expect(detail.locator("p")).to_be_hidden()
    _tab_to(page, "[data-error-detail] summary")
    page.keyboard.press("Enter")
    expect(detail.locator("p")).to_contain_text("ReadTimeout: the read operation timed out")
    assert Thread.objects.filter(owner=reader[0], title="How are search results ranked?").count() == 0
    assert [e for e in watched.errors if "Failed to load resource" not in e] == []


def test_a_user_without_a_source_is_told_who_to_ask_instead_of_a_form(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    User.objects.create_superuser("site-admin", email="admin@example.org", password="an-admin-passphrase-1")
    page, _ = open_page("/ask/", **PHONE_DARK)

    expect(page.locator('[data-form="ask"]')).to_have_count(0)
    expect(page.locator("[data-administrators]")).to_contain_text("Ask an administrator")
    expect(page.locator(".administrators")).to_contain_text("site-admin (admin@example.org)")
