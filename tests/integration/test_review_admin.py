"""The queue admin: an admin creates a queue with reviewers, a lead, owners and agent names,
and a reviewer who owns nothing then reads the agent's thread; verdicts stay read-only."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from knowledgeweb.review.models import ReviewQueue
from knowledgeweb.threads.services import thread_create
from tests.factories import logged_in

pytestmark = pytest.mark.django_db


def test_an_admin_puts_an_agents_threads_in_a_queue_and_a_reviewer_reads_them() -> None:
    root = User.objects.create_superuser("root", password="root-password-1")
    agent = User.objects.create_user("agent", password="agent-password-1")
    reviewer = User.objects.create_user("reviewer", password="reviewer-password-1")
    thread = thread_create(owner=agent, title="Agent thread", agent_name="triage-bot")
    other = thread_create(owner=agent, title="Other agent", agent_name="other-bot")
    assert logged_in(reviewer).get(f"/threads/{thread.id}/").status_code == 404
    response = logged_in(root).post(
        "/admin/review/reviewqueue/add/",
        {
            "name": "Triage",
            "description": "",
            "guidelines": "Judge *claims*.",
            "reviewers": [reviewer.pk],
            "owners": [agent.pk],
            "agent_names": "triage-bot\n\ntriage-bot\n",
            "overlap": 1,
            "added_threads-TOTAL_FORMS": 0,
            "added_threads-INITIAL_FORMS": 0,
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    queue = ReviewQueue.objects.get()
    assert queue.agent_names == ["triage-bot"]
    assert logged_in(reviewer).get(f"/threads/{thread.id}/").status_code == 200
    assert logged_in(reviewer).get(f"/threads/{other.id}/").status_code == 404
    assert logged_in(root).get(f"/admin/review/reviewqueue/{queue.pk}/change/").status_code == 200
    assert logged_in(root).get("/admin/review/verdict/add/").status_code == 403
