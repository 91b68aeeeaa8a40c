"""The citation viewer in a real browser: genuine citations open, forged ones stay inert."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Locator, Page, expect

from knowledgeweb.knowledge import RetrievalHit, RetrievalResult, format_result_view
from knowledgeweb.threads.services import message_append, thread_create
from tests.e2e.scenarios import Source, forged_thread, hostile_thread, verified_thread
from tests.e2e.watching import THREAD_PAGE_SCRIPTS, Watched

pytestmark = pytest.mark.e2e

OpenPage = Callable[..., tuple[Page, Watched]]
RESOLVED = 'a.citation[data-citation="resolved"]'


def _dialog(page: Page) -> Locator:
    return page.locator("dialog[data-citation-dialog]")


def _field(page: Page, name: str) -> Locator:
    return _dialog(page).locator(f'[data-dialog-field="{name}"]')


def _expect_dialog_shows(page: Page, source: Source) -> None:
    expect(_dialog(page)).to_be_visible()
    expect(_field(page, "title")).to_have_text(source.title)
    # Exact, character for character: textContent, not Playwright's whitespace-normalised text.
    assert _field(page, "excerpt").text_content() == source.excerpt
    assert _field(page, "title").text_content() == source.title


def test_the_thread_list_shows_the_readers_threads(reader: tuple[User, Any], open_page: OpenPage) -> None:
    verified = verified_thread(reader[0])
    page, watched = open_page("/")
    page.locator(f'[data-thread-id="{verified.thread.id}"] a').click()
    assert watched.errors == []
    expect(page.locator(RESOLVED).first).to_be_visible()


def test_each_accepted_form_opens_the_dialog_with_the_exact_excerpt(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    verified = verified_thread(reader[0])
    page, watched = open_page(f"/threads/{verified.thread.id}/")
    citations = page.locator(RESOLVED)
    expect(citations).to_have_count(4)

    # In the answer's order: "guide", "same guide", "1", "notes"; none shows its label, each
    # its source's number in the thread.
    cases = [
        (0, "[1]", verified.shared),  # #knowledge-source-ID
        (1, "[1]", verified.shared),  # #user-content-knowledge-source-ID
        (2, "[2]", verified.native),  # #knowledge-<id>-N
    ]
    for position, number, source in cases:
        citation = citations.nth(position)
        expect(citation.locator(".citation-number")).to_have_text(number)
        # Never the label: the number and the source's own title (a label that names the source
        # is no mismatch).
        expect(citation).to_have_accessible_name(f"{number} {source.title}")
        expect(citation).to_have_attribute("href", f"#{source.handle}")
        expect(citation).to_have_attribute("data-source-id", source.id)
        citation.click()
        _expect_dialog_shows(page, source)
        page.keyboard.press("Escape")
        expect(_dialog(page)).to_be_hidden()
        expect(citation).to_be_focused()

    citations.nth(0).click()
    expect(_field(page, "provider")).to_have_text("local")
    expect(_field(page, "dataset")).to_have_text("Pets")
    expect(_field(page, "page")).to_have_text("3")
    expect(_field(page, "url")).to_have_attribute("href", "https://example.org/cats?a=1&b=2")
    expect(_field(page, "url")).to_have_attribute("rel", "noopener noreferrer")
    expect(_field(page, "truncated")).to_be_hidden()
    _dialog(page).locator("[data-dialog-close]").click()

    citations.nth(2).click()
    expect(_field(page, "provider")).to_have_text("ragflow")
    expect(_field(page, "dataset")).to_have_text("Reports")
    expect(_field(page, "page")).to_have_text("7")
    expect(_dialog(page).locator('[data-dialog-row="url"]')).to_be_hidden()
    page.keyboard.press("Escape")

    citations.nth(3).click()
    expect(citations.nth(3).locator(".citation-number")).to_have_text("[3]")
    _expect_dialog_shows(page, verified.truncated)
    assert watched.errors == []
    assert watched.dialogs == []
    expect(_field(page, "truncated")).to_be_visible()


def test_hovering_previews_and_the_panel_counts_and_toggles_sources(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    verified = verified_thread(reader[0])
    page, watched = open_page(f"/threads/{verified.thread.id}/")
    preview = page.locator("[data-citation-preview]")

    page.locator(RESOLVED).first.hover()
    expect(preview).to_be_visible()
    expect(preview.locator('[data-preview-field="title"]')).to_have_text(verified.shared.title)

    expect(page.locator(f'[data-source-entry][id="{verified.shared.handle}"]')).to_have_attribute(
        "data-citations", "2"
    )
    uncited = page.locator(f'[data-source-entry][id="{verified.uncited.handle}"]')
    expect(uncited).to_be_hidden()
    page.locator("[data-sources-toggle] summary").click()
    assert watched.errors == []
    expect(uncited).to_be_visible()


def test_forged_citations_render_as_inert_unresolved_buttons_with_their_reason(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    forged = forged_thread(reader[0])
    page, watched = open_page(f"/threads/{forged.thread.id}/")

    for label in forged.labels:
        # The citation shows a word; its reason names the answer's label.
        reason = page.locator(".citation-reason", has_text=f"The answer labelled it “{label}”")
        expect(reason).to_have_count(1)
        button = page.locator(f'button.citation[popovertarget="{reason.get_attribute("id")}"]')
        expect(button).to_have_attribute("data-citation", "unresolved")
        expect(button).to_have_text("no source")
        expect(button).not_to_have_attribute("href", re.compile(".*"))
        expect(button).to_have_accessible_description(re.compile(f"labelled it “{re.escape(label)}”"))
        expect(page.locator("a.citation", has_text=label)).to_have_count(0)
        button.click()
        expect(_dialog(page)).to_be_hidden()
        expect(reason).to_be_visible()
        # A reason links at most to the later search of this thread that holds the evidence.
        for href in reason.locator("a").evaluate_all("(links) => links.map((a) => a.getAttribute('href'))"):
            assert re.fullmatch(r"#message-[0-9a-f-]{36}", href)
        page.keyboard.press("Escape")
        expect(reason).to_be_hidden()

    later = page.locator(RESOLVED)
    expect(later).to_have_count(1)
    expect(later).to_have_attribute("href", f"#{forged.later.handle}")
    assert watched.errors == []
    expect(page.locator("[data-citation]")).to_have_count(5)


def test_hostile_content_runs_nothing_and_the_citation_still_reaches_the_panel(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    hostile = hostile_thread(reader[0])
    page, watched = open_page(f"/threads/{hostile.thread.id}/")

    for details in page.locator("details").all():
        details.locator("summary").click()
    page.locator("main p", has_text="handlers").hover()
    citation = page.locator(RESOLVED)
    expect(citation).to_have_count(1)
    citation.hover()
    citation.click()
    _expect_dialog_shows(page, hostile.source)
    page.keyboard.press("Escape")

    target = page.evaluate(
        """(handle) => {
            const el = document.getElementById(handle);
            return {
                isPanelEntry: !!el && el.hasAttribute("data-source-entry") && !!el.closest("[data-sources-panel]"),
                sameId: document.querySelectorAll("[id='" + handle + "']").length,
                scripts: [...document.querySelectorAll("script")].map((s) => s.src.split("/").pop()).sort(),
                active: document.querySelectorAll("main svg, main iframe, main form, main img").length,
                handlers: document.querySelectorAll("main [onclick], main [onmouseover], main [onload]").length,
                jsLinks: [...document.querySelectorAll("a[href]")].filter(a => /^\\s*javascript:/i.test(a.getAttribute("href"))).length,
            };
        }""",
        hostile.source.handle,
    )
    assert target == {
        "isPanelEntry": True,
        "sameId": 1,
        "scripts": THREAD_PAGE_SCRIPTS,  # ours, each from a file
        "active": 0,
        "handlers": 0,
        "jsLinks": 0,
    }
    # Raw HTML in a message is text: the would-be clobbering element is shown, never built.
    expect(page.locator('[data-message-type="ai"]')).to_contain_text(
        f'<div id="{hostile.source.handle}">clobbered panel anchor</div>'
    )
    assert watched.dialogs == []
    assert watched.errors == []
    expect(page.locator("[data-sources-panel]")).to_be_visible()


def test_a_keyboard_only_reader_can_open_and_close_a_citation(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    verified = verified_thread(reader[0])
    page, watched = open_page(f"/threads/{verified.thread.id}/")
    first = page.locator(RESOLVED).first

    for _ in range(30):
        page.keyboard.press("Tab")
        if page.evaluate(f"document.activeElement.matches({RESOLVED!r})"):
            break
    expect(first).to_be_focused()
    expect(page.locator("[data-citation-preview]")).to_be_visible()
    expect(first).to_have_attribute("aria-describedby", "citation-preview")

    page.keyboard.press("Enter")
    _expect_dialog_shows(page, verified.shared)
    expect(_dialog(page).locator("[data-dialog-close]")).to_be_focused()
    page.keyboard.press("Escape")
    expect(_dialog(page)).to_be_hidden()
    expect(first).to_be_focused()

    page.keyboard.press("Enter")
    expect(_dialog(page)).to_be_visible()
    page.keyboard.press("Enter")  # the focused close button
    expect(_dialog(page)).to_be_hidden()
    assert watched.errors == []
    expect(first).to_be_focused()


def test_without_javascript_a_citation_jumps_to_its_panel_entry(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    verified = verified_thread(reader[0])
    page, watched = open_page(f"/threads/{verified.thread.id}/", javascript=False)

    page.locator(RESOLVED).nth(1).click()  # "same guide", the #user-content- form

    expect(page).to_have_url(re.compile(f"#{verified.shared.handle}$"))
    entry = page.locator(f'[id="{verified.shared.handle}"]')
    expect(entry).to_have_attribute("data-source-entry", "")
    expect(entry).to_be_in_viewport()
    expect(_dialog(page)).to_be_hidden()
    assert entry.locator('[data-field="excerpt"]').text_content() == verified.shared.excerpt
    assert watched.errors == []
    expect(page.locator(":target")).to_have_attribute("data-source-id", verified.shared.id)


@pytest.mark.parametrize(("width", "scheme"), [(1280, "light"), (390, "dark")])
def test_a_long_unbreakable_line_scrolls_inside_its_message_instead_of_widening_the_page(
    reader: tuple[User, Any], open_page: OpenPage, width: int, scheme: str
) -> None:
    verified = verified_thread(reader[0])
    message_append(
        thread=verified.thread,
        type="ai",
        content="```\n" + "an_unbreakable_identifier_" * 40 + "\n```\n\nhttps://example.org/" + "x" * 300,
    )
    page, watched = open_page(
        f"/threads/{verified.thread.id}/", viewport={"width": width, "height": 900}, color_scheme=scheme
    )

    assert page.evaluate("document.documentElement.scrollWidth") <= width
    messages = page.locator("[data-messages]").bounding_box()
    panel = page.locator("[data-sources-panel]").bounding_box()
    assert messages is not None
    assert panel is not None
    if width >= 960:  # side by side: the thread column stops before the panel starts
        widest = page.evaluate(
            "Math.max(...[...document.querySelectorAll('[data-messages] > li')]"
            ".map(li => li.getBoundingClientRect().right))"
        )
        assert widest <= panel["x"]
    else:  # stacked: the panel follows the thread
        assert panel["y"] >= messages["y"] + messages["height"]
    assert watched.errors == []


def test_without_javascript_a_hostile_threads_citation_still_reaches_the_panel_entry(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    hostile = hostile_thread(reader[0])
    page, watched = open_page(f"/threads/{hostile.thread.id}/", javascript=False)

    page.locator(RESOLVED).click()

    expect(page).to_have_url(re.compile(f"#{hostile.source.handle}$"))
    target = page.locator(":target")
    expect(target).to_have_attribute("data-source-entry", "")
    expect(target).to_have_attribute("data-source-id", hostile.source.id)
    expect(page.locator("[data-sources-panel] :target")).to_have_count(1)
    expect(target).to_be_in_viewport()
    assert target.locator('[data-field="title"]').text_content() == hostile.source.title
    assert watched.errors == []


def test_tool_messages_fold_open_to_their_hits_and_a_relation_edge_reaches_its_evidence(
    reader: tuple[User, Any], open_page: OpenPage
) -> None:
    thread = thread_create(owner=reader[0], title="Graph")
    formatted = format_result_view(
        RetrievalResult(
            provider="lightrag",
            query="q",
            tool="entity_relations_search",
            hits=(
                RetrievalHit(text="Alice joined Acme in 2020.", title="people.md"),
                RetrievalHit(
                    text="works for",
                    kind="relation",
                    source_entity="Alice",
                    target_entity="Acme",
                    evidence=(1,),
                ),
            ),
        )
    )
    relations = message_append(  # as the retrieval service records a search it ran
        thread=thread,
        type="tool",
        name="entity_relations_search",
        content=formatted.content,
        artifact=formatted.artifact,
        trusted=True,
        tool_view=formatted.view,
    )
    message_append(thread=thread, type="tool", name="knowledge_search", content="Timed out.", status="error")
    page, watched = open_page(f"/threads/{thread.id}/")

    tool = page.locator(f'[data-tool-message="{relations.id}"]')
    edge = tool.locator('[data-hit-kind="relation"]')
    expect(edge).to_be_hidden()
    tool.locator("summary").click()
    expect(edge).to_be_visible()
    expect(edge.locator(".badge-unattributed")).to_have_text("unattributed graph fact")
    edge.locator("[data-edge-evidence]").click()
    expect(page.locator(":target")).to_have_attribute("data-hit-kind", "source")
    expect(page.locator(":target")).to_contain_text("Alice joined Acme in 2020.")

    failed = page.locator('[data-tool-status="error"]')
    failed.locator("summary").click()
    expect(failed.locator("[data-tool-error]")).to_have_text("The tool call failed: Timed out.")
    assert watched.errors == []
