"""axe-core on every page of the app, light and dark, desktop and phone: 0 violations.

axe-playwright-python bundles axe-core, so this runs offline. The pages are the
login page, the thread list (with pages, a search and an empty search), every
demo thread (built by the demo's own code through retrieval and the composer),
the browser-test scenarios (verified, forged, hostile, a long thread), a thread
with its source dialog open, Ask before and after an answer, Ask's error states,
the delete confirmation and the not-found page. The Django admin and Swagger UI
are third-party: their findings are listed in docs/operations.md instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.contrib.auth.models import User
from playwright.sync_api import Browser, Page, expect

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.library.provider import LocalProvider
from knowledgeweb.providers.errors import ProviderTimeoutError
from knowledgeweb.threads.services import thread_create
from tests.e2e.navigation_scenarios import demo_threads, long_thread
from tests.e2e.review_scenarios import binding_name, review_thread, speech_passage_path
from tests.e2e.scenarios import forged_thread, hostile_thread, verified_thread
from tests.e2e.watching import Watched

pytestmark = pytest.mark.e2e

OpenPage = Callable[..., tuple[Page, Watched]]
AXE = Axe()
SIZES = [(1280, "light"), (1280, "dark"), (390, "light"), (390, "dark")]


def _violations(page: Page) -> list[str]:
    results = AXE.run(page)
    return [
        f"{v['id']} ({v['impact']}): " + "; ".join(" ".join(node["target"]) for node in v["nodes"][:3])
        for v in results.response["violations"]
    ]


@pytest.mark.parametrize(("width", "scheme"), SIZES)
def test_every_app_page_has_no_axe_violations(
    reader: tuple[User, Any],
    open_page: OpenPage,
    browser: Browser,
    live_server: Any,
    monkeypatch: pytest.MonkeyPatch,
    width: int,
    scheme: str,
) -> None:
    owner = reader[0]
    screen: dict[str, Any] = {"viewport": {"width": width, "height": 900}, "color_scheme": scheme}
    demos = demo_threads(owner)
    scenarios = {
        "verified": verified_thread(owner).thread,
        "forged": forged_thread(owner).thread,
        "hostile": hostile_thread(owner).thread,
        "long": long_thread(owner, turns=8),
        "review": review_thread(owner).thread,
    }
    for n in range(55):
        thread_create(owner=owner, title=f"Filler thread {n}")
    found: dict[str, list[str]] = {}
    page, watched = open_page("/", **screen)

    def check(name: str, path: str, prepare: Callable[[Page], None] | None = None) -> None:
        page.goto(path)
        if prepare is not None:
            prepare(page)
        problems = _violations(page)
        if problems:
            found[name] = problems
        # Error states answer 4xx/5xx on purpose; the browser logs the status, nothing else may appear.
        errors = [
            e for e in watched.errors if not e.startswith("Failed to load resource: the server responded")
        ]
        assert errors == [], (name, errors)
        watched.errors.clear()

    for thread in demos:
        check(f"demo {thread.title}", f"/threads/{thread.id}/")
    for name, thread in scenarios.items():
        check(f"thread {name}", f"/threads/{thread.id}/")

    def open_dialog(page: Page) -> None:
        page.locator('a.citation[data-citation="resolved"]').first.click()
        expect(page.locator("dialog[data-citation-dialog]")).to_be_visible()

    def open_outline_and_a_reason(page: Page) -> None:
        page.locator("[data-outline] summary").click()
        page.locator('button.citation[data-citation="unresolved"]').first.click()
        expect(page.locator(".citation-reason:popover-open")).to_have_count(1)

    def open_marked_dialog(page: Page) -> None:
        page.locator('a.citation[data-citation="resolved"]').first.click()
        expect(page.locator('dialog[data-citation-dialog] [data-dialog-field="excerpt"] mark')).to_have_count(
            1
        )

    def open_a_reason(page: Page) -> None:
        page.locator('button.citation[data-citation="malformed"]').first.click()
        expect(page.locator(".citation-reason:popover-open")).to_have_count(1)

    check("thread dialog", f"/threads/{scenarios['verified'].id}/", open_dialog)
    check("review dialog", f"/threads/{scenarios['review'].id}/", open_marked_dialog)
    check("review reason", f"/threads/{scenarios['review'].id}/", open_a_reason)
    check("document passage", speech_passage_path())
    # The Ask checks below expect the reader's one binding, the sample corpus's.
    KnowledgeBinding.objects.filter(name=binding_name(owner, "Speeches")).delete()
    check("thread outline open", f"/threads/{scenarios['long'].id}/", open_outline_and_a_reason)
    check("home", "/")
    check("home page 2", "/?page=2")
    check("home search", "/?q=filler")
    check("home empty search", "/?q=nothing-matches-this")
    check("delete confirmation", f"/threads/{scenarios['verified'].id}/delete/")
    check("not found", "/threads/00000000-0000-0000-0000-000000000000/")
    check("ask", "/ask/")

    def ask_empty(page: Page) -> None:
        page.locator('[data-field="question"]').fill("   ")  # passes the browser's check, not the server's
        page.locator('[data-action="ask"]').click()
        expect(page.locator('[data-ask-error="question"]')).to_be_visible()

    check("ask refused question", "/ask/", ask_empty)

    def answer(page: Page) -> None:
        page.locator('[data-field="question"]').fill("How are search results ranked?")
        page.locator('[data-action="ask"]').click()
        expect(page.locator('[data-message-type="ai"]')).to_be_visible()

    check("ask answered", "/ask/", answer)

    def slow(self: LocalProvider, query: str, **_: object) -> None:
        raise ProviderTimeoutError("ReadTimeout: timed out")

    monkeypatch.setattr(LocalProvider, "search", slow)

    def failed(page: Page) -> None:
        page.locator('[data-field="question"]').fill("How are search results ranked?")
        page.locator('[data-action="ask"]').click()
        expect(page.locator('[data-ask-error="provider"]')).to_be_visible()
        page.locator("[data-error-detail] summary").click()

    check("ask provider error", "/ask/", failed)
    owner.knowledge_bindings.clear()
    check("ask without a source", "/ask/")

    anonymous = browser.new_context(base_url=live_server.url, **screen)
    login = anonymous.new_page()
    login.goto("/accounts/login/")
    if problems := _violations(login):
        found["login"] = problems
    login.locator('input[name="username"]').fill("nobody")
    login.locator('input[name="password"]').fill("wrong-password")
    login.locator('[data-action="login"]').click()
    expect(login.locator(".form-error")).to_be_visible()
    if problems := _violations(login):
        found["login refused"] = problems
    anonymous.close()

    assert found == {}


def test_the_axe_harness_reports_a_violation_when_there_is_one(browser: Browser) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.set_content(
        '<html lang="en"><title>t</title><main><img src="data:,"><div style="overflow:auto;height:20px">'
        + "scroll " * 200
        + "</div></main></html>"
    )

    problems = _violations(page)

    assert any(p.startswith("image-alt") for p in problems), problems
    assert any(p.startswith("scrollable-region-focusable") for p in problems), problems
    context.close()
