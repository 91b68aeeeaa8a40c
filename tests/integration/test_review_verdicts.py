"""Verdicts through the service and the API: items, blind by default, bad input, quotas, limits."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client, override_settings

from knowledgeweb.review.access import thread_access
from knowledgeweb.review.models import Verdict
from knowledgeweb.review.selectors import thread_items
from tests.factories import logged_in
from tests.reviewing import ReviewWorld, remove_reviewer, review_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world() -> ReviewWorld:
    return review_world()


def _put(client: Client, url: str, body: Any) -> Any:
    return client.put(url, data=json.dumps(body), content_type="application/json")


def _citation_url(world: ReviewWorld, n: int) -> str:
    return f"/api/threads/{world.thread.id}/review/citations/{world.answer.id}/{n}"


def _answer_url(world: ReviewWorld, message_id: object) -> str:
    return f"/api/threads/{world.thread.id}/review/answers/{message_id}"


def test_the_item_set_is_every_citation_and_every_answer(world: ReviewWorld) -> None:
    items = thread_items(thread=world.thread)
    assert [(i.kind, i.position, i.state, i.judgeable) for i in items] == [
        ("citation", 1, "resolved", True),
        ("citation", 2, "resolved", True),
        ("citation", 3, "unresolved", False),
        ("citation", 4, "malformed", False),
        ("answer", 0, "answer", True),
        ("answer", 0, "answer", True),
    ]
    assert items[1].label_mismatch is True
    assert items[5].uncited is True


def test_a_reviewer_judges_a_citation_and_an_answer(world: ReviewWorld) -> None:
    client = logged_in(world.reviewer)
    response = _put(client, _citation_url(world, 1), {"verdict": "supports", "note": "Exact words."})
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["verdict"], body["position"], body["label"], body["reviewer"]) == (
        "supports",
        1,
        "Gettysburg",
        "reviewer",
    )
    assert body["href"] == f"#{world.handle}"
    response = _put(client, _answer_url(world, world.uncited.id), {"verdict": "needs_changes"})
    assert response.status_code == 200
    review = client.get(f"/api/threads/{world.thread.id}/review").json()
    assert (review["judged"], review["judgeable"], review["role"]) == (2, 4, "reviewer")
    assert review["counts"] == {"supports": 1, "needs_changes": 1}


def test_verdicts_are_append_only_and_the_latest_counts(world: ReviewWorld) -> None:
    client = logged_in(world.reviewer)
    for value in ("supports", "does_not_support"):
        assert _put(client, _citation_url(world, 2), {"verdict": value}).status_code == 200
    review = client.get(f"/api/threads/{world.thread.id}/review").json()
    item = review["items"][1]
    assert [v["verdict"] for v in item["verdicts"]] == ["supports", "does_not_support"]
    assert item["mine"]["verdict"] == "does_not_support"
    assert review["counts"] == {"does_not_support": 1}
    assert Verdict.objects.count() == 2


def test_blind_until_judged_and_the_lead_sees_all(world: ReviewWorld) -> None:
    assert (
        _put(logged_in(world.reviewer), _citation_url(world, 1), {"verdict": "supports"}).status_code == 200
    )
    second = logged_in(world.second)
    item = second.get(f"/api/threads/{world.thread.id}/review").json()["items"][0]
    assert (item["verdicts"], item["mine"], item["hidden"]) == ([], None, 1)
    assert _put(second, _citation_url(world, 1), {"verdict": "cant_tell"}).status_code == 200
    item = second.get(f"/api/threads/{world.thread.id}/review").json()["items"][0]
    assert sorted(v["reviewer"] for v in item["verdicts"]) == ["reviewer", "second"]
    lead_view = logged_in(world.lead).get(f"/api/threads/{world.thread.id}/review").json()
    assert lead_view["sees_all"] is True
    assert len(lead_view["items"][0]["verdicts"]) == 2


@pytest.mark.parametrize("role", ["outsider", "other_reviewer", "removed"])
def test_a_verdict_on_a_thread_you_may_not_review_is_404_and_writes_nothing(
    world: ReviewWorld, role: str
) -> None:
    remove_reviewer(world)
    response = _put(logged_in(world.user(role)), _citation_url(world, 1), {"verdict": "supports"})
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert not Verdict.objects.exists()


def test_the_owner_who_reviews_nothing_gets_403_and_writes_nothing(world: ReviewWorld) -> None:
    response = _put(logged_in(world.owner), _citation_url(world, 1), {"verdict": "supports"})
    assert response.status_code == 403
    assert "do not review" in response.json()["detail"]
    assert not Verdict.objects.exists()


@pytest.mark.parametrize(
    ("n", "words"),
    [(9, "No such citation: citation 9 of answer"), (3, "no source was found"), (4, "it is malformed")],
)
def test_a_missing_or_unjudgeable_citation_is_422_naming_it(world: ReviewWorld, n: int, words: str) -> None:
    response = _put(logged_in(world.reviewer), _citation_url(world, n), {"verdict": "supports"})
    assert response.status_code == 422
    body = response.json()
    assert words in body["detail"]
    assert body["item"] == f"citation {n} of answer {world.answer.id}"
    assert "Nothing was written" in body["detail"]
    assert not Verdict.objects.exists()


def test_an_answer_not_in_the_thread_is_422_naming_it(world: ReviewWorld) -> None:
    human = world.thread.messages.get(seq=1)
    response = _put(logged_in(world.reviewer), _answer_url(world, human.id), {"verdict": "acceptable"})
    assert response.status_code == 422
    assert response.json()["item"] == f"answer {human.id}"
    assert not Verdict.objects.exists()


@pytest.mark.parametrize(
    ("kind", "value", "allowed"),
    [
        ("citation", "acceptable", ["supports", "partly_supports", "does_not_support", "cant_tell"]),
        ("answer", "supports", ["acceptable", "needs_changes", "unacceptable"]),
        ("citation", "great", ["supports", "partly_supports", "does_not_support", "cant_tell"]),
    ],
)
def test_an_unknown_verdict_is_422_listing_the_allowed_ones(
    world: ReviewWorld, kind: str, value: str, allowed: list[str]
) -> None:
    url = _citation_url(world, 1) if kind == "citation" else _answer_url(world, world.answer.id)
    response = _put(logged_in(world.reviewer), url, {"verdict": value})
    assert response.status_code == 422
    body = response.json()
    assert body["allowed"] == allowed
    assert ", ".join(allowed) in body["detail"]
    assert not Verdict.objects.exists()


def test_a_note_over_the_cap_or_unstorable_is_422_and_writes_nothing(world: ReviewWorld) -> None:
    client = logged_in(world.reviewer)
    response = _put(client, _citation_url(world, 1), {"verdict": "supports", "note": "x" * 2001})
    assert response.status_code == 422
    assert "at most 2000" in response.json()["detail"]
    response = _put(client, _citation_url(world, 1), {"verdict": "supports", "note": "a\u0000b"})
    assert response.status_code == 422
    assert not Verdict.objects.exists()


@override_settings(QUOTA_USER_BYTES=10)
def test_notes_count_against_the_storage_quota(world: ReviewWorld) -> None:
    client = logged_in(world.reviewer)
    response = _put(client, _citation_url(world, 1), {"verdict": "supports", "note": "a long enough note"})
    assert response.status_code == 413
    assert response.json()["quota"] == "user_bytes"
    assert not Verdict.objects.exists()
    assert _put(client, _citation_url(world, 1), {"verdict": "supports"}).status_code == 200


@override_settings(QUOTA_THREAD_MESSAGES=1)
def test_verdicts_per_thread_are_capped(world: ReviewWorld) -> None:
    client = logged_in(world.reviewer)
    assert _put(client, _citation_url(world, 1), {"verdict": "supports"}).status_code == 200
    response = _put(client, _citation_url(world, 1), {"verdict": "cant_tell"})
    assert response.status_code == 413
    assert Verdict.objects.count() == 1


def test_verdicts_count_against_the_write_rate_limit(world: ReviewWorld, settings: Any) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "write": (1, 60)}
    client = logged_in(world.reviewer)
    assert _put(client, _citation_url(world, 1), {"verdict": "supports"}).status_code == 200
    response = _put(client, _citation_url(world, 2), {"verdict": "supports"})
    assert response.status_code == 429
    assert response["Retry-After"]
    assert Verdict.objects.count() == 1


def test_an_orphaned_verdict_is_shown_apart_never_moved(world: ReviewWorld) -> None:
    client = logged_in(world.reviewer)
    assert _put(client, _citation_url(world, 1), {"verdict": "supports"}).status_code == 200
    # A later renderer counting differently: the verdict's href no longer matches citation 1.
    Verdict.objects.filter(pk=Verdict.objects.get().pk).update(href="#knowledge-source-elsewhere")
    review = client.get(f"/api/threads/{world.thread.id}/review").json()
    assert review["items"][0]["verdicts"] == []
    assert [v["href"] for v in review["orphaned"]] == ["#knowledge-source-elsewhere"]


def test_a_queue_narrowed_by_agent_name_admits_only_that_agent() -> None:
    world = review_world(agent_name="another-bot")
    world.queue.agent_names = ["triage-bot"]
    world.queue.save()
    response = logged_in(world.reviewer).get(f"/api/threads/{world.thread.id}/review")
    assert response.status_code == 404
    world.queue.agent_names = ["another-bot"]
    world.queue.save()
    assert thread_access(user=world.reviewer, thread_id=world.thread.id).reviews is True
