"""The review queue pages and the thread list's review side (issue 27): progress, "Start
reviewing" reserving and opening review mode, the lead's final verdict form, the filters and
each thread's state; a queue the user is not in is 404 and nothing is written."""

from __future__ import annotations

import re
from typing import Any

import pytest

from knowledgeweb.review.models import FinalVerdict, Reservation
from tests.factories import UserFactory, logged_in
from tests.review_queues import cited_thread, items_of, judge, queue_for


@pytest.fixture
def world(db: None) -> dict[str, Any]:
    agent, alice, bob, lead, outsider = (
        UserFactory.create(username=n) for n in ("agent", "alice", "bob", "lead", "outsider")
    )
    first = cited_thread(agent, title="First", citations=2)
    second = cited_thread(agent, title="Second", citations=1)
    queue = queue_for([agent], [alice, bob], overlap=2, lead=lead, name="Support answers")
    return {
        "alice": alice,
        "bob": bob,
        "lead": lead,
        "outsider": outsider,
        "first": first,
        "second": second,
        "queue": queue,
    }


def test_the_queue_list_shows_progress_and_start_reserves_and_opens_review_mode(
    world: dict[str, Any],
) -> None:
    client = logged_in(world["alice"])
    page = client.get("/review/").content.decode()
    assert "Support answers" in page
    assert "0 of 5 items done" in page
    assert "0 of 2 threads done" in page
    response = client.post(f"/review/{world['queue'].pk}/start/")
    assert response.status_code == 302
    assert response["Location"] == f"/threads/{world['first'].id}/review/"
    assert Reservation.objects.filter(reviewer=world["alice"], thread=world["first"]).exists()
    judge(world["first"], world["alice"], "supports")
    judge(world["first"], world["bob"], "supports")
    page = client.get("/review/").content.decode()
    assert "3 of 5 items done" in page
    assert "1 of 2 threads done" in page
    assert "alice: 3 judged" in page


def test_start_with_nothing_left_says_so(world: dict[str, Any]) -> None:
    for thread in (world["first"], world["second"]):
        judge(thread, world["alice"], "supports")
    client = logged_in(world["alice"])
    response = client.post(f"/review/{world['queue'].pk}/start/", follow=True)
    assert "Nothing in “Support answers” needs your verdicts now." in response.content.decode()


def test_a_queue_i_am_not_in_is_404_everywhere_and_reserves_nothing(world: dict[str, Any]) -> None:
    client = logged_in(world["outsider"])
    assert "Support answers" not in client.get("/review/").content.decode()
    assert client.get(f"/review/{world['queue'].pk}/").status_code == 404
    assert client.post(f"/review/{world['queue'].pk}/start/").status_code == 404
    assert client.post(f"/review/{world['queue'].pk}/final/", {}).status_code == 404
    assert not Reservation.objects.filter(reviewer__isnull=False).exists()


def test_the_lead_settles_a_dispute_from_the_queue_page(world: dict[str, Any]) -> None:
    first = world["first"]
    judge(first, world["alice"], ["supports", "supports"])
    judge(first, world["bob"], ["supports", "does_not_support"])
    reviewer_page = logged_in(world["alice"]).get(f"/review/{world['queue'].pk}/").content.decode()
    assert 'data-form="final-verdict"' not in reviewer_page  # only the lead gets the form
    lead = logged_in(world["lead"])
    page = lead.get(f"/review/{world['queue'].pk}/").content.decode()
    assert "Cohen's kappa" in page
    assert page.count('data-form="final-verdict"') == 1
    message = items_of(first)[0].key.message_id
    form = {"message": str(message), "kind": "citation", "position": "2", "verdict": "partly_supports"}
    response = lead.post(f"/review/{world['queue'].pk}/final/", form)
    assert response.status_code == 302
    assert FinalVerdict.objects.get().value == "partly_supports"
    assert "Final verdict: partly supports" in lead.get(f"/review/{world['queue'].pk}/").content.decode()


def test_a_final_verdict_form_the_queue_refuses_says_why_and_writes_nothing(world: dict[str, Any]) -> None:
    judge(world["first"], world["alice"], "supports")
    judge(world["first"], world["bob"], "supports")
    message = items_of(world["first"])[0].key.message_id
    lead = logged_in(world["lead"])
    form = {"message": str(message), "kind": "citation", "position": "1", "verdict": "supports"}
    response = lead.post(f"/review/{world['queue'].pk}/final/", form)
    assert response.status_code == 422
    assert "is not disputed" in response.content.decode()
    bad = lead.post(f"/review/{world['queue'].pk}/final/", {**form, "message": "not-a-uuid"})
    assert bad.status_code == 422
    assert "The form names no item of this queue. Nothing was written." in bad.content.decode()
    reviewer = logged_in(world["alice"]).post(f"/review/{world['queue'].pk}/final/", form)
    assert reviewer.status_code == 403
    assert not FinalVerdict.objects.exists()


def _listed(html: str) -> list[str]:
    return re.findall(r'class="thread-link" href="[^"]+">([^<]+)</a>', html)


def test_the_thread_list_filters_and_shows_each_threads_review_state(world: dict[str, Any]) -> None:
    first, second = world["first"], world["second"]
    judge(first, world["bob"], ["supports", "does_not_support"])
    alice = logged_in(world["alice"])
    assert sorted(_listed(alice.get("/?review=mine").content.decode())) == ["First", "Second"]
    # Bob's "does not support" is not for alice's eyes before she judges that item.
    assert _listed(alice.get("/?review=does-not-support").content.decode()) == []
    judge(first, world["alice"], ["supports", "supports"])
    assert _listed(alice.get("/?review=does-not-support").content.decode()) == ["First"]
    assert _listed(alice.get("/?review=disputed").content.decode()) == ["First"]
    assert _listed(alice.get("/?review=mine").content.decode()) == ["Second"]
    page = alice.get("/?review=mine").content.decode()
    assert 'data-state="needs-review"' in page
    lead_page = logged_in(world["lead"]).get("/?review=disputed").content.decode()
    assert _listed(lead_page) == ["First"]
    assert 'data-state="done"' in lead_page
    assert second.title not in _listed(lead_page)
