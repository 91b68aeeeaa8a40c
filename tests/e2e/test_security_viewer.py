"""Red team in a real browser: a hostile but genuine source stays text in the preview and dialog,
and links that only resemble citations never open the source dialog."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from knowledgeweb.knowledge import source_id
from knowledgeweb.threads.services import message_append, thread_create
from tests.e2e.watching import THREAD_PAGE_SCRIPTS, Watched

pytestmark = pytest.mark.e2e

OpenPage = Callable[..., tuple[Page, Watched]]

TITLE = '<img src=x onerror="alert(1)"> Guide'
EXCERPT = 'Step one: <script>alert(document.cookie)</script> then "><svg onload=alert(2)>.'
DATASET = "<b onmouseover=alert(3)>Ops</b>"


def test_a_hostile_genuine_source_is_shown_as_text_and_lookalike_links_open_nothing(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    thread = thread_create(owner=reader[0], title="<svg onload=alert(4)>")
    record_id = source_id("local", TITLE, EXCERPT, DATASET)
    handle = f"knowledge-source-{record_id}"
    record = {
        "id": record_id,
        "provider": "local",
        "title": TITLE,
        "excerpt": EXCERPT,
        "dataset_name": DATASET,
    }
    message_append(
        thread=thread,
        type="tool",
        name="knowledge_search",
        content=f"Results.\n\n[1] [citation:{TITLE}](#{handle})\n{EXCERPT}",
        artifact={"knowledge_sources_version": 1, "knowledge_sources": [record]},
        trusted=True,
    )
    message_append(
        thread=thread,
        type="ai",
        content=(
            f"Real [<svg onload=prompt(5)>](#{handle}). "
            f"Lookalikes [upper](#knowledge-source-{record_id.upper()}) "
            f"[absolute](https://evil.example/#{handle}) "
            f"[doubled](#user-content-user-content-{handle})."
        ),
    )
    page, watched = open_page(f"/threads/{thread.id}/")

    citation = page.locator('a.citation[data-citation="resolved"]')
    expect(citation).to_have_count(1)
    citation.hover()
    preview = page.locator("[data-citation-preview]")
    expect(preview).to_be_visible()
    assert preview.locator('[data-preview-field="title"]').text_content() == TITLE
    citation.click()
    dialog = page.locator("dialog[data-citation-dialog]")
    expect(dialog).to_be_visible()
    assert dialog.locator('[data-dialog-field="title"]').text_content() == TITLE
    assert dialog.locator('[data-dialog-field="excerpt"]').text_content() == EXCERPT
    assert dialog.locator('[data-dialog-field="dataset"]').text_content() == DATASET
    # The answer's hostile label is named as text where it misleads, and is never the link's text.
    assert dialog.locator('[data-dialog-field="label-mismatch"]').text_content() == (
        "Label names another source: the answer labelled this citation “<svg onload=prompt(5)>”."
    )
    assert dialog.locator("img, svg, script, b").count() == 0
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    # The hostile label names another source: said in words, never shown as the label.
    expect(citation).to_have_accessible_name(f"[1] {TITLE} (label names another source)")

    # The answer's references and the panel's backlinks show the title as text.
    reference = page.locator("[data-answer-sources] a[data-answer-source]")
    assert reference.text_content() == f"[1] {TITLE}"
    backlink = page.locator("[data-sources-panel] a[data-backlink]")
    expect(backlink).to_have_text("answer 1")
    assert backlink.get_attribute("href") == f"#{citation.get_attribute('id')}"

    for label in ("upper", "absolute", "doubled"):
        reason = page.locator(".citation-reason", has_text=f"The answer labelled it “{label}”")
        expect(reason).to_have_count(1)
        button = page.locator(f'button.citation[popovertarget="{reason.get_attribute("id")}"]')
        expect(button).to_have_text("malformed")
        button.click()
        expect(dialog).to_be_hidden()
        expect(reason).to_be_visible()
        expect(reason.locator("a, img, svg")).to_have_count(0)
        page.keyboard.press("Escape")

    live = page.evaluate(
        """() => ({
            images: document.querySelectorAll("img, svg").length,
            bold: document.querySelectorAll("main b").length,
            scripts: [...document.querySelectorAll("script")].map((s) => s.src.split("/").pop()).sort(),
            clobbered: typeof window.citation_dialog,
        })"""
    )
    # Only our own scripts, each from a file: nothing in the page added one.
    assert live == {"images": 0, "bold": 0, "scripts": THREAD_PAGE_SCRIPTS, "clobbered": "undefined"}
    assert watched.dialogs == []
    assert watched.errors == []
