"""The review queue API (issue 27): my queues with progress, next (204 when none), agreement,
the lead's final verdict, and their refusals: JSON errors, nothing written."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.review.models import FinalVerdict, Reservation
from tests.factories import TokenFactory, UserFactory
from tests.review_queues import cited_thread, items_of, judge, queue_for

BASE = "/api/review/queues"


def _client(user: User) -> Client:
    return TokenFactory.create(user=user).client()


@pytest.fixture
def setup(db: None) -> dict[str, object]:
    agent = UserFactory.create(username="agent")
    alice, bob = UserFactory.create(username="alice"), UserFactory.create(username="bob")
    lead = UserFactory.create(username="lead")
    thread = cited_thread(agent, citations=2)
    queue = queue_for([agent], [alice, bob], overlap=2, lead=lead)
    return {"agent": agent, "alice": alice, "bob": bob, "lead": lead, "thread": thread, "queue": queue}


def test_my_queues_with_progress_and_nobody_elses(setup: dict) -> None:
    judge(setup["thread"], setup["alice"], "supports")
    body = _client(setup["alice"]).get(BASE).json()
    assert [q["name"] for q in body] == ["Q"]
    (queue,) = body
    assert (queue["items"], queue["items_done"], queue["threads"], queue["threads_done"]) == (3, 0, 1, 0)
    assert queue["states"] == {"needs others": 1}
    assert queue["per_reviewer"] == [{"reviewer": "alice", "items_judged": 3}]
    assert _client(setup["lead"]).get(BASE).json()[0]["name"] == "Q"
    assert _client(setup["agent"]).get(BASE).json() == []
    assert Client().get(BASE).status_code == 401


def test_next_reserves_then_answers_204_when_nothing_needs_me(setup: dict) -> None:
    alice, queue, thread = setup["alice"], setup["queue"], setup["thread"]
    response = _client(alice).post(f"{BASE}/{queue.pk}/next")
    assert response.status_code == 200
    assert response.json()["thread_id"] == str(thread.id)
    assert Reservation.objects.filter(queue=queue, reviewer=alice, thread=thread).exists()
    judge(thread, alice, "supports")
    assert _client(alice).post(f"{BASE}/{queue.pk}/next").status_code == 204


def test_next_on_a_queue_i_am_not_in_is_404_and_reserves_nothing(setup: dict) -> None:
    response = _client(setup["agent"]).post(f"{BASE}/{setup['queue'].pk}/next")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert not Reservation.objects.filter(reviewer__isnull=False).exists()
    assert _client(setup["alice"]).post(f"{BASE}/999999/next").status_code == 404


def test_agreement_lists_the_disputed_item_and_the_lead_settles_it(setup: dict) -> None:
    queue, thread = setup["queue"], setup["thread"]
    judge(thread, setup["alice"], ["supports", "supports"])
    judge(thread, setup["bob"], ["supports", "does_not_support"])
    body = _client(setup["alice"]).get(f"{BASE}/{queue.pk}/agreement").json()
    assert body["reviewers"] == ["alice", "bob"]
    assert body["units"] == 2
    assert body["kappa"] == pytest.approx(0.0)  # agreeing half the time, as chance would
    (disputed,) = body["disputed"]
    assert (disputed["kind"], disputed["position"]) == ("citation", 2)
    assert disputed["verdicts"] == {"alice": "supports", "bob": "does_not_support"}
    final = {
        "message_id": disputed["message_id"],
        "kind": "citation",
        "position": 2,
        "verdict": "partly_supports",
    }
    refused = _client(setup["alice"]).post(
        f"{BASE}/{queue.pk}/final-verdicts", final, content_type="application/json"
    )
    assert refused.status_code == 403
    assert refused.json()["detail"] == "Only the queue's lead records a final verdict."
    assert not FinalVerdict.objects.exists()
    lead = _client(setup["lead"])
    recorded = lead.post(f"{BASE}/{queue.pk}/final-verdicts", final, content_type="application/json")
    assert recorded.status_code == 201
    assert recorded.json()["verdict"] == "partly_supports"
    assert lead.get(f"{BASE}/{queue.pk}/agreement").json()["disputed"][0]["final"] == "partly_supports"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"verdict": "great"},
            "Unknown citation verdict 'great'; allowed: supports, partly_supports, does_not_support, cant_tell.",
        ),
        ({"position": 1}, "is not disputed"),
        ({"position": 7}, "No citation 7 in message"),
        ({"message_id": "00000000-0000-0000-0000-000000000000"}, "is not in this queue"),
    ],
)
def test_a_final_verdict_the_queue_refuses_is_422_naming_why_and_writes_nothing(
    setup: dict,
    change: dict,
    message: str,
) -> None:
    thread = setup["thread"]
    judge(thread, setup["alice"], ["supports", "supports"])
    judge(thread, setup["bob"], ["supports", "does_not_support"])
    message_id = str(items_of(thread)[0].key.message_id)
    body = {"message_id": message_id, "kind": "citation", "position": 2, "verdict": "supports", **change}
    response = _client(setup["lead"]).post(
        f"{BASE}/{setup['queue'].pk}/final-verdicts", json.dumps(body), content_type="application/json"
    )
    assert response.status_code == 422
    assert message in response.json()["detail"]
    assert not FinalVerdict.objects.exists()


def test_an_unknown_export_format_is_422_listing_the_allowed_ones(setup: dict) -> None:
    response = _client(setup["alice"]).get(f"{BASE}/{setup['queue'].pk}/export?format=xlsx")
    assert response.status_code == 422
    assert response.json()["detail"] == "Unknown export format 'xlsx'; allowed: jsonl, csv."
    assert _client(setup["agent"]).get(f"{BASE}/{setup['queue'].pk}/export").status_code == 404
