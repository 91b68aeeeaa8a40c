"""The reviewer sees what was verified: numbers and titles from the evidence, the closest
passage marked, references and backlinks, evidence in its document, reasons within reach.

Debian's Chromium through Playwright, against the live server; the threads come from the
real services and a real local-index search (``review_scenarios``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from playwright.sync_api import Page, expect

from knowledgeweb.accounts.services import token_create
from knowledgeweb.threads.services import message_append
from tests.e2e.review_scenarios import Review, review_thread, speeches, summaries_thread
from tests.e2e.watching import Watched

pytestmark = pytest.mark.e2e

RESOLVED = 'a.citation[data-citation="resolved"]'
# The search retrieves two chunks of the speech; sources of one title are told apart.
SPEECH_TITLE = "The Gettysburg Address (passage 1 of 2)"
Opener = Callable[..., tuple[Page, Watched]]


def _citation(page: Page, answer: int, handle: str) -> Any:
    answers = page.locator('[data-message-type="ai"]')
    return answers.nth(answer - 1).locator(f'{RESOLVED}[href="#{handle}"]')


def _dialog(page: Page) -> Any:
    return page.locator("dialog[data-citation-dialog]")


def _claim_highlight(page: Page) -> str:
    return str(
        page.evaluate(
            r"""() => {
              const h = CSS.highlights.get("knowledgeweb-claim");
              // The claim's own words: the citation markers inside the range are not part of it.
              const text = (range) => {
                const copy = range.cloneContents();
                copy.querySelectorAll(".citation, .citation-reason").forEach((el) => el.remove());
                return copy.textContent.replace(/\s+([.,;:!?])/g, "$1");
              };
              return h ? Array.from(h).map(text).join("|") : "";
            }"""
        )
    )


def _report(owner: User, review: Review) -> dict[str, Any]:
    _, raw = token_create(user=owner, name="report")
    response = Client().get(f"/api/threads/{review.thread.id}/citations", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert response.status_code == 200
    payload: dict[str, Any] = json.loads(response.content)
    return payload


def test_a_spoofed_label_shows_the_sources_number_and_title_and_the_dialog_and_report_name_it(
    open_page: Opener, reader: tuple[User, Any]
) -> None:
    review = review_thread(reader[0])
    page, watched = open_page(f"/threads/{review.thread.id}/")

    first = _citation(page, 1, review.speech)
    expect(first).to_have_count(1)
    expect(first.locator(".citation-number")).to_have_text("[1]")
    # The mismatch is announced in the citation's name and shown by a sign beside its number.
    expect(first).to_have_accessible_name(
        re.compile(r"^\[1\]\s+The Gettysburg Address \(label names another source\)\s*$")
    )
    expect(first.locator(".citation-flag")).to_be_visible()
    expect(page.locator("[data-messages]")).not_to_contain_text("NASA")
    shown = page.locator("[data-messages] .citation").all_text_contents()
    assert len(shown) == 5
    assert not any("citation:" in text for text in shown)
    # The same source is [1] wherever the thread cites it; the next source is [2].
    expect(_citation(page, 2, review.speech).locator(".citation-number")).to_have_text("[1]")
    expect(_citation(page, 2, review.other).locator(".citation-number")).to_have_text("[2]")

    first.click()
    dialog = _dialog(page)
    expect(dialog).to_be_visible()
    expect(dialog.locator('[data-dialog-field="title"]')).to_have_text(SPEECH_TITLE)
    expect(dialog.locator('[data-dialog-field="number"]')).to_have_text("[1]")
    expect(dialog.locator('[data-dialog-field="label-mismatch"]')).to_have_text(
        "Label names another source: the answer labelled this citation “NASA Earth Fact Sheet, 2024”."
    )
    page.keyboard.press("Escape")
    _citation(page, 2, review.speech).click()
    expect(dialog.locator('[data-dialog-field="label-mismatch"]')).to_be_hidden()
    page.keyboard.press("Escape")
    _citation(page, 2, review.other).click()  # labelled "citation:2": a number is no mismatch
    expect(dialog.locator('[data-dialog-field="label-mismatch"]')).to_be_hidden()

    flags = [
        (c["label"], c["label_mismatch"])
        for m in _report(reader[0], review)["messages"]
        for c in m["citations"]
    ]
    assert flags == [
        ("citation:NASA Earth Fact Sheet, 2024", True),
        ("Gettysburg", False),
        ("citation:2", False),
        ("citation:Made up", False),
        ("citation:Bad", False),
    ]
    assert watched.errors == []


def test_the_closest_passage_is_marked_only_for_a_claim_that_shares_words_with_the_excerpt(
    open_page: Opener, reader: tuple[User, Any]
) -> None:
    review = review_thread(reader[0])
    page, watched = open_page(f"/threads/{review.thread.id}/")
    dialog = _dialog(page)

    # Hovering a citation highlights the sentence that holds it.
    first = _citation(page, 1, review.speech)
    first.hover()
    expect(page.locator("[data-citation-preview] mark")).to_have_text(review.closest)
    assert _claim_highlight(page) == "Lincoln said that they had met on a battle-field of that war."

    first.click()
    expect(dialog.locator('[data-dialog-field="excerpt"] mark')).to_have_text([review.closest])
    expect(dialog.locator('[data-dialog-row="passage"]')).to_be_visible()
    page.keyboard.press("Escape")

    _citation(page, 2, review.other).click()  # "Quarterly tax filings rose sharply": no shared word
    expect(dialog.locator('[data-dialog-field="excerpt"]')).to_have_text(
        "Mercury is the smallest planet.\nIts orbit takes 88 days."
    )
    expect(dialog.locator('[data-dialog-field="excerpt"] mark')).to_have_count(0)
    expect(dialog.locator('[data-dialog-row="passage"]')).to_be_hidden()
    page.keyboard.press("Escape")

    # The panel marks, without any script, the passages closest to the claims citing each source.
    panel_marks = page.locator(f'[id="{review.speech}"] [data-field="excerpt"] mark')
    expect(panel_marks.first).to_have_text(review.closest)
    expect(page.locator(f'[id="{review.other}"] [data-field="excerpt"] mark')).to_have_count(0)
    assert watched.errors == []


def test_references_and_backlinks_lead_both_ways_with_the_keyboard(
    open_page: Opener, reader: tuple[User, Any]
) -> None:
    review = review_thread(reader[0])
    page, watched = open_page(f"/threads/{review.thread.id}/")
    second = page.locator('[data-message-type="ai"]').nth(1)
    references = second.locator("[data-answer-sources] li")
    expect(references).to_have_text(
        [
            re.compile(r"^\[1\] The Gettysburg Address \(passage 1 of 2\)\s+local · Speeches$"),
            re.compile(r"^\[2\] Planets primer\s+local · Astronomy$"),
        ]
    )

    # From an answer's reference to its source, by keyboard.
    reference = second.locator(f'a[data-answer-source][href="#{review.other}"]')
    reference.focus()
    page.keyboard.press("Enter")
    expect(_dialog(page).locator('[data-dialog-field="title"]')).to_have_text("Planets primer")
    page.keyboard.press("Escape")
    expect(reference).to_be_focused()

    # From the source to every place that cites it, and back.
    backlinks = page.locator(f'[id="{review.speech}"] a[data-backlink]')
    expect(backlinks).to_have_text(["answer 1", "answer 2"])
    backlinks.nth(1).focus()
    page.keyboard.press("Enter")
    target = _citation(page, 2, review.speech)
    expect(target).to_be_focused()
    expect(page).to_have_url(re.compile(f"#{target.get_attribute('id')}$"))
    assert _claim_highlight(page) == "He spoke at the cemetery."
    page.keyboard.press("Enter")
    expect(_dialog(page).locator('[data-dialog-field="title"]')).to_have_text(SPEECH_TITLE)
    assert watched.errors == []


def test_open_in_document_lands_on_the_passage_and_no_other_reader_may_open_it(
    open_page: Opener, reader: tuple[User, Any]
) -> None:
    review = review_thread(reader[0])
    page, watched = open_page(f"/threads/{review.thread.id}/")
    _citation(page, 1, review.speech).click()
    document = _dialog(page).locator('[data-dialog-field="document"]')
    expect(document).to_be_visible()
    path = document.get_attribute("href")
    assert path is not None
    assert path.endswith("#passage")

    citation_id = _citation(page, 1, review.speech).get_attribute("id")
    document.click()
    passage = page.locator("#passage")
    expect(passage).to_be_in_viewport()
    # The title stays in view with the marked passage; only the closest sentence is marked.
    expect(page.locator("#document-title")).to_be_in_viewport()
    expect(passage.locator("mark")).to_have_text([review.closest])
    excerpt = page.locator(f'[id="{review.speech}"]')  # gone: a new page
    expect(excerpt).to_have_count(0)
    assert "battle-field" in (passage.text_content() or "")
    expect(page.locator("[data-document-citing]")).to_contain_text("Cited in “What Lincoln said”, answer 1")
    page.locator('[data-action="back-to-citation"]').click()
    expect(page).to_have_url(re.compile(f"/threads/{review.thread.id}/#{citation_id}$"))
    expect(_citation(page, 1, review.speech)).to_be_focused()
    assert watched.errors == []

    # Another reader, whose bindings serve another collection, gets a 404.
    other = User.objects.create_user("other-reader", password="another-long-passphrase-2")
    speeches(other, name="Other speeches")
    client = Client()
    client.force_login(other)
    assert client.get(path.split("#")[0]).status_code == 404
    owner = Client()
    owner.force_login(reader[0])
    assert owner.get(path.split("#")[0]).status_code == 200


def test_a_reason_is_the_accessible_description_and_opens_by_tap(
    open_page: Opener, reader: tuple[User, Any]
) -> None:
    review = review_thread(reader[0])
    page, watched = open_page(
        f"/threads/{review.thread.id}/", has_touch=True, viewport={"width": 390, "height": 844}
    )
    unresolved = page.locator('button.citation[data-citation="unresolved"]')
    malformed = page.locator('button.citation[data-citation="malformed"]')
    # A word, never the model's label or number; the reason names the label and the raw href.
    expect(unresolved).to_have_text("no source")
    expect(unresolved).to_have_accessible_description(
        re.compile(
            "No tool message before this answer in the thread holds evidence for this source. "
            "The answer labelled it “Made up”; its link is #knowledge-source-0{32}."
        )
    )
    expect(malformed).to_have_text("malformed")
    expect(malformed).to_have_accessible_description(
        re.compile("characters other than the hexadecimal digits .* its link is #knowledge-source-nothex")
    )
    reason = page.locator(f'[id="{unresolved.get_attribute("id")}-reason"]')
    expect(reason).to_be_hidden()
    unresolved.tap()
    expect(reason).to_be_visible()
    expect(reason).to_be_in_viewport()

    # The two kinds look different, and neither like deleted text.
    looks = [
        page.evaluate(
            "(el) => { const s = getComputedStyle(el); return [s.borderTopStyle, s.color, s.textDecorationLine]; }",
            b.element_handle(),
        )
        for b in (unresolved, malformed)
    ]
    assert looks[0][0] != looks[1][0]
    assert looks[0][1] != looks[1][1]
    assert "line-through" not in looks[0][2] + looks[1][2]
    assert watched.errors == []


def test_the_header_counts_in_honest_words_and_next_issue_walks_every_problem(
    open_page: Opener, reader: tuple[User, Any]
) -> None:
    review = review_thread(reader[0])
    page, watched = open_page(f"/threads/{review.thread.id}/")
    expect(page.locator("[data-citation-tally]")).to_have_text(
        "3 source found · 1 no source · 1 malformed · 1 label names another source"
    )
    next_link = page.locator('[data-issue-walk] [data-walk="next"]')
    position = page.locator("[data-walk-position]")
    mismatch = _citation(page, 1, review.speech)
    unresolved = page.locator('button.citation[data-citation="unresolved"]')
    malformed = page.locator('button.citation[data-citation="malformed"]')
    for target, n in ((mismatch, 1), (unresolved, 2), (malformed, 3), (mismatch, 1)):
        next_link.click()
        expect(target).to_be_focused()
        expect(position).to_have_text(f"{n} of 3")
        expect(target).to_have_class(re.compile(r"\bwalk-current\b"))
    assert watched.errors == []


def test_without_javascript_a_citation_a_reference_and_a_backlink_land_on_their_targets(
    open_page: Opener, reader: tuple[User, Any]
) -> None:
    review = review_thread(reader[0])
    page, _ = open_page(f"/threads/{review.thread.id}/", javascript=False)

    _citation(page, 1, review.speech).click()
    expect(page).to_have_url(re.compile(f"#{review.speech}$"))
    expect(page.locator(":target")).to_have_attribute("data-source-entry", "")

    page.locator('[data-message-type="ai"]').nth(1).locator(
        f'a[data-answer-source][href="#{review.other}"]'
    ).click()
    expect(page).to_have_url(re.compile(f"#{review.other}$"))
    expect(page.locator(":target")).to_have_attribute(
        "data-source-id", review.other.removeprefix("knowledge-source-")
    )

    page.locator(f'[id="{review.speech}"] a[data-backlink]').nth(1).click()
    target = _citation(page, 2, review.speech)
    expect(page).to_have_url(re.compile(f"#{target.get_attribute('id')}$"))
    expect(page.locator(":target")).to_have_attribute("href", f"#{review.speech}")
    expect(target).to_be_in_viewport()

    # "Next issue" lands on the first problem (the mismatched label); an unverified citation's
    # reason opens with no script.
    first = _citation(page, 1, review.speech)
    page.locator('[data-issue-walk] [data-walk="next"]').click()
    expect(page).to_have_url(re.compile(f"#{first.get_attribute('id')}$"))
    expect(first).to_be_in_viewport()
    unresolved = page.locator('button.citation[data-citation="unresolved"]')
    unresolved.click()
    expect(page.locator(f'[id="{unresolved.get_attribute("id")}-reason"]')).to_be_visible()


def test_tool_summaries_say_what_the_budget_kept_and_what_found_nothing(
    open_page: Opener, reader: tuple[User, Any]
) -> None:
    thread = summaries_thread(reader[0])
    page, watched = open_page(f"/threads/{thread.id}/")
    tools = page.locator("[data-tool-message]")
    cut, empty = tools.nth(0), tools.nth(1)
    summary = cut.locator("[data-tool-summary]")
    expect(summary).to_be_visible()
    shown = re.search(r"\((\d+) of 8 shown\)", summary.text_content() or "")
    assert shown is not None
    assert 0 < int(shown.group(1)) < 8
    expect(cut.locator("[data-tool-notice]")).to_be_visible()  # without expanding
    expect(cut.locator("[data-tool-notice]")).to_contain_text("omitted to fit the output budget")
    cut.locator("summary").click()
    expect(cut.locator("[data-hit-kind]")).to_have_count(int(shown.group(1)))
    expect(empty.locator("[data-tool-summary]")).to_have_text(
        "Nothing found for “zebra crossings” (Knowledge search, local)."
    )
    assert watched.errors == []


def test_an_excerpt_wraps_softly_and_copies_exactly(open_page: Opener, reader: tuple[User, Any]) -> None:
    review = review_thread(reader[0])
    page, watched = open_page(f"/threads/{review.thread.id}/")
    _citation(page, 2, review.other).click()
    excerpt = _dialog(page).locator('[data-dialog-field="excerpt"]')
    # One line on screen (the hard line break wraps softly)...
    assert (
        excerpt.evaluate("(el) => el.innerText") == "Mercury is the smallest planet. Its orbit takes 88 days."
    )
    # ...and the exact text on the clipboard.
    copied = excerpt.evaluate(
        """(el) => {
          const range = document.createRange();
          range.selectNodeContents(el);
          const selection = window.getSelection();
          selection.removeAllRanges();
          selection.addRange(range);
          const event = new ClipboardEvent("copy", { clipboardData: new DataTransfer(), bubbles: true, cancelable: true });
          el.dispatchEvent(event);
          return event.clipboardData.getData("text/plain");
        }"""
    )
    assert copied == "Mercury is the smallest planet.\nIts orbit takes 88 days."
    assert watched.errors == []


def test_a_table_in_an_answer_renders_with_its_citation_resolved_inside(
    open_page: Opener, reader: tuple[User, Any]
) -> None:
    review = review_thread(reader[0])
    message_append(
        thread=review.thread,
        type="ai",
        content=(
            "| Claim | Source |\n|:---|---:|\n"
            f"| They met on a great battle-field | [citation:speech](#{review.speech}) |\n"
            "| ~~Mercury is large~~ | see https://example.org/planets |\n"
        ),
    )
    page, watched = open_page(f"/threads/{review.thread.id}/", viewport={"width": 390, "height": 844})
    table = page.locator('[data-message-type="ai"]').nth(2).locator("table")
    expect(table).to_be_visible()
    cited = table.locator(f'td {RESOLVED}[href="#{review.speech}"]')
    expect(cited.locator(".citation-number")).to_have_text("[1]")
    expect(table.locator("s")).to_have_text("Mercury is large")
    expect(table.locator('a[href="https://example.org/planets"]')).to_have_attribute(
        "rel", "noopener noreferrer"
    )
    # A wide table scrolls in its own box; the page does not scroll sideways on a phone.
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    cited.click()
    dialog = _dialog(page)
    expect(dialog.locator('[data-dialog-field="title"]')).to_have_text(SPEECH_TITLE)
    # The claim of a citation alone in its cell is its row.
    expect(dialog.locator('[data-dialog-field="claim"]')).to_have_text("They met on a great battle-field")
    expect(dialog.locator('[data-dialog-field="excerpt"] mark')).to_have_text([review.closest])
    assert watched.errors == []
