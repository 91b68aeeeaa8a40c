"""In a real browser: a call links to its answer, parts open on demand, hostile values run nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from knowledgeweb.threads.interchange.imports import thread_import_body
from knowledgeweb.threads.selectors import thread_messages
from tests.e2e.watching import Watched
from tests.frameworks import EXCERPT, QUERY, anthropic_request

pytestmark = pytest.mark.e2e

OpenPage = Callable[..., tuple[Page, Watched]]


def test_a_call_links_to_its_answer_and_parts_open_on_demand(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    body = anthropic_request()
    body["messages"][1]["content"][2]["input"]["query"] = f"<img src=x onerror=alert(1)> {QUERY}"
    thread = thread_import_body(owner=reader[0], body=body)
    tool = thread_messages(thread=thread)[3]
    page, watched = open_page(f"/threads/{thread.id}/")

    call = page.locator("[data-tool-call]")
    expect(call).to_contain_text(f"called knowledge_search with query '<img src=x onerror=alert(1)> {QUERY}'")
    thinking = page.locator('[data-part="thinking"]')
    expect(thinking.locator(".message-part-text")).to_be_hidden()
    thinking.locator("summary").click()
    expect(thinking.locator(".message-part-text")).to_have_text("I should search first.")
    expect(page.locator('[data-part="image"] summary')).to_have_text("Image (image/png), not shown")

    call.locator("a.tool-call-answer").click()
    assert page.url.endswith(f"#message-{tool.id}")
    answer = page.locator(f"#message-{tool.id}")
    expect(answer).to_be_in_viewport()
    # The page sends the tool message's summary; its hits load when it is expanded (issue 25).
    answer.locator("summary").click()
    expect(answer).to_contain_text(EXCERPT)
    assert page.locator("main img").count() == 0
    assert (watched.dialogs, watched.errors) == ([], [])
