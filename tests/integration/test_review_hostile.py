"""Hostile notes and guidelines render inert (the security tests' XSS corpus), on every screen
that shows them: review mode, the thread page's chips, the evidence page and the export."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from knowledgeweb.review.services import verdict_record
from tests.e2e.scenarios import XSS_EXCERPT, XSS_TITLE
from tests.factories import logged_in
from tests.reviewing import ReviewWorld, review_world

pytestmark = pytest.mark.django_db

CORPUS = (
    XSS_TITLE,
    XSS_EXCERPT,
    "<script>alert('ai')</script> [js link](javascript:alert('ai')) <p onclick=\"alert('ai')\">x</p>",
    '"><img src=x onerror=alert(1)> </textarea><svg onload=alert(1)>',
)


class _Tags(HTMLParser):
    """Every tag and attribute a browser would build from the page."""

    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}>")
            if name in {"href", "src", "action", "formaction"} and (value or "").strip().lower().startswith(
                "javascript:"
            ):
                self.problems.append(f"<{tag} {name}={value}>")
        if tag in {"iframe", "svg", "form"} and not (dict(attrs).get("class") or "").startswith(
            ("verdict-form", "logout-form", "login-form")
        ):
            self.problems.append(f"<{tag}>")
        if tag == "script" and not (dict(attrs).get("src") or "").startswith("/static/"):
            self.problems.append("<script> inline")
        if tag == "img":
            self.problems.append("<img>")


def _inert(html: str) -> list[str]:
    parser = _Tags()
    parser.feed(html)
    return parser.problems


@pytest.fixture
def world() -> ReviewWorld:
    world = review_world()
    world.queue.guidelines = "\n\n".join(CORPUS)
    world.queue.save()
    for n, note in enumerate(CORPUS):
        verdict_record(
            reviewer=world.reviewer,
            thread_id=world.thread.id,
            message_id=world.answer.id,
            kind="citation",
            position=1 + n % 2,
            value="supports",
            note=note,
        )
    return world


def test_hostile_notes_and_guidelines_are_inert_on_every_screen(world: ReviewWorld) -> None:
    for user in (world.reviewer, world.lead):
        client = logged_in(user)
        for path in (
            f"/threads/{world.thread.id}/review/",
            f"/threads/{world.thread.id}/",
            f"/threads/{world.thread.id}/evidence/{world.answer.id}/1/",
        ):
            response = client.get(path)
            assert response.status_code == 200, path
            page = response.content.decode()
            assert _inert(page) == [], path
        review_page = client.get(f"/threads/{world.thread.id}/review/").content.decode()
        # The notes are shown, as text.
        assert "&lt;script&gt;alert(&#x27;ai&#x27;)&lt;/script&gt;" in review_page
        assert "&lt;img src=x onerror=alert(1)&gt;" in review_page


def test_hostile_notes_are_plain_text_in_the_api_and_the_export(world: ReviewWorld) -> None:
    client = logged_in(world.lead)
    review = client.get(f"/api/threads/{world.thread.id}/review").json()
    notes = {v["note"] for item in review["items"] for v in item["verdicts"]}
    assert notes == set(CORPUS)
    (queue,) = review["queues"]
    assert _inert(queue["guidelines_html"]) == []
    assert "&lt;script&gt;" in queue["guidelines_html"]
    export = client.get(f"/api/threads/{world.thread.id}/export?format=markdown").content.decode()
    assert "- Review: judged 0 of 4 · 2 supports" in export
