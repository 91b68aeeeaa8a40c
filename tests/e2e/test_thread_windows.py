"""A windowed thread page in a real browser (issue 25): a 2,000-message thread opens at its
latest window; a citation whose source was retrieved in an earlier window opens its dialog;
"earlier turns" and the window URL without JavaScript reach the first message; the walk
crosses windows; a panel entry links the claims of other windows citing its source; a tool
message's hits load when it is expanded."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from knowledgeweb.knowledge import RetrievalHit
from knowledgeweb.threads.services import message_append, thread_create
from tests.e2e.watching import Watched
from tests.long_threads import long_thread
from tests.searches import hit_handles, record_search

pytestmark = pytest.mark.e2e

OpenPage = Callable[..., tuple[Page, Watched]]


def test_a_2000_message_thread_opens_at_its_latest_window_and_an_earlier_source_opens_its_dialog(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    thread, first = long_thread(reader[0], 500)  # 2,000 messages, windows of 100

    page, watched = open_page(f"/threads/{thread.id}/")

    items = page.locator("[data-messages] > li")
    expect(items).to_have_count(100)
    expect(items.first).to_have_attribute("data-seq", "1901")
    expect(items.last).to_have_attribute("data-seq", "2000")
    # "doc 0" cites the thread's first source, retrieved 1,900 messages (19 windows) earlier.
    citation = page.locator(f'[data-messages] a.citation[data-citation="resolved"][href="#{first}"]').last
    citation.click()
    dialog = page.locator("dialog[data-citation-dialog]")
    expect(dialog).to_be_visible()
    expect(dialog.locator('[data-dialog-field="title"]')).to_have_text("doc-0.md")
    assert "Fact number 0 about the subject." in (
        dialog.locator('[data-dialog-field="excerpt"]').text_content() or ""
    )
    assert watched.errors == []


def test_earlier_turns_load_on_demand_until_the_first_message(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    thread, _ = long_thread(reader[0], 60)  # windows of 100, 100 and 40 messages

    page, watched = open_page(f"/threads/{thread.id}/")
    expect(page.locator("[data-messages] > li").first).to_have_attribute("data-seq", "201")

    earlier = page.locator("[data-earlier-turns]")
    earlier.click()
    expect(page.locator("[data-messages] > li").first).to_have_attribute("data-seq", "101")
    earlier.click()
    expect(page.locator("[data-messages] > li").first).to_have_attribute("data-seq", "1")
    expect(page.locator("[data-messages] > li")).to_have_count(240)
    expect(earlier).to_have_count(0)
    # Still this page: the windows were loaded into it.
    assert page.url.endswith(f"/threads/{thread.id}/")
    assert watched.errors == []


def test_without_javascript_the_window_urls_reach_the_first_message(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    thread, _ = long_thread(reader[0], 60)

    page, _watched = open_page(f"/threads/{thread.id}/", javascript=False)
    page.locator("[data-earlier-turns]").click()
    expect(page).to_have_url(re.compile(r"\?window=2$"))
    page.locator("[data-earlier-turns]").click()
    expect(page).to_have_url(re.compile(r"\?window=1$"))
    expect(page.locator("[data-messages] > li").first).to_have_attribute("data-seq", "1")
    expect(page.locator("[data-earlier-turns]")).to_have_count(0)


@pytest.mark.parametrize("javascript", [True, False])
def test_a_panel_entry_links_the_claims_of_other_windows_citing_its_source(
    reader: tuple[User, Any], open_page: OpenPage, javascript: bool
) -> None:
    # Every answer cites the thread's first source: its entry in the last window's panel links
    # the first claim of windows 1 and 2, each by its window's URL.
    thread, first = long_thread(reader[0], 60)

    page, watched = open_page(f"/threads/{thread.id}/", javascript=javascript)
    links = page.locator(f'[data-sources-panel] [id="{first}"] [data-backlinks-elsewhere] a')
    expect(links).to_have_count(2)
    expect(links.first).to_contain_text("answer 1 (window 1")
    anchor = links.first.get_attribute("data-backlink") or ""
    links.first.click()
    expect(page).to_have_url(re.compile(rf"\?window=1#{anchor}$"))
    claim = page.locator(f'[id="{anchor}"]')
    expect(claim).to_have_count(1)
    expect(claim).to_be_in_viewport()
    assert int(claim.locator("xpath=ancestor::li[@data-seq]").get_attribute("data-seq") or 0) <= 4
    assert watched.errors == []


def test_the_walk_crosses_windows(reader: tuple[User, Any], open_page: OpenPage) -> None:
    # A citation with no source in the first window and another in the last (long_thread).
    thread, _ = long_thread(reader[0], 60)

    page, watched = open_page(f"/threads/{thread.id}/")
    walk = page.locator("[data-issue-walk]")
    walk.locator('[data-walk="next"]').click()  # the last window's own problem
    current = page.locator(".walk-current")
    expect(current).to_have_count(1)
    assert int(current.locator("xpath=ancestor::li[@data-seq]").get_attribute("data-seq") or 0) > 200
    # Before it: the walk goes on in the nearest earlier window holding one (the first).
    walk.locator('[data-walk="previous"]').click()
    expect(page).to_have_url(re.compile(r"\?window=1#walk-last$"))
    current = page.locator(".walk-current")
    expect(current).to_have_count(1)
    expect(current).to_have_attribute("data-citation", "unresolved")
    assert int(current.locator("xpath=ancestor::li[@data-seq]").get_attribute("data-seq") or 0) <= 100
    # And past the first window's last problem, on to the last window's first.
    page.locator('[data-issue-walk] [data-walk="next"]').click()
    expect(page).to_have_url(re.compile(r"\?window=3#walk-first$"))
    expect(page.locator(".walk-current")).to_have_count(1)
    assert watched.errors == []


def test_a_tool_messages_hits_load_when_it_is_expanded(reader: tuple[User, Any], open_page: OpenPage) -> None:
    thread = thread_create(owner=reader[0], title="Hits")
    _tool, formatted = record_search(thread, RetrievalHit(text="Alpha is first.", title="alpha.md"))
    (handle,) = hit_handles(formatted)
    message_append(thread=thread, type="ai", content=f"Per [alpha](#{handle}).")

    page, watched = open_page(f"/threads/{thread.id}/")
    tool = page.locator("details[data-tool-message]")
    expect(tool.locator(".hit")).to_have_count(0)
    tool.locator("summary").click()
    expect(tool.locator(".hit")).to_have_count(1)
    expect(tool.locator(".hit .citation-number")).to_have_text("[1]")
    expect(tool.locator("[data-tool-hits]")).to_have_count(0)
    assert watched.errors == []
