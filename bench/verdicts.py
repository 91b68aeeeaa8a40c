"""A thread page with 200 verdicts costs at most 1.2x the same page without them (issue 26).

Two identical threads (50 answers citing 4 found sources each: 200 citations in 100 messages,
one page window) in one review queue; on one, reviewers recorded 200 verdicts (one per
citation, by two reviewers, so the lead sees chips on every citation of the page). The lead's
GET /threads/<id>/ of each is timed in turns (``interleaved_medians``, each sample after a
``gc.collect()``): verdicts are laid over the stored render at assembly, never a reason to
render a message again, which is counted too (no render during either page).
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Any

if __package__ in {None, ""}:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import finish, interleaved_medians, setup_django, show_count, show_ratio, show_time

ANSWERS = 50
REPEAT = 15
CITED = 4  # sources each answer cites
TARGET = 1.2


def main() -> int:
    setup_django()
    from django.contrib.auth import get_user_model
    from django.test import Client

    from knowledgeweb.knowledge import RetrievalHit
    from knowledgeweb.review.models import ReviewQueue, Verdict
    from knowledgeweb.threads.models import Message, MessageRender, Thread
    from knowledgeweb.threads.rendering.pipeline import render_counter
    from knowledgeweb.threads.services import message_append, thread_create
    from tests.searches import hit_handles, record_search

    users = get_user_model().objects
    agent = users.create_user("agent", password="agent-password-1")
    lead = users.create_user("lead", password="lead-password-1")
    reviewers = [users.create_user(f"reviewer{n}", password=f"reviewer{n}-password-1") for n in (1, 2)]

    def build(title: str) -> tuple[Thread, list[Message]]:
        thread = thread_create(owner=agent, title=title, agent_name="bench-bot")
        answers = []
        for n in range(ANSWERS):
            _, formatted = record_search(
                thread,
                *(
                    RetrievalHit(text=f"Fact {n}.{k} is stated plainly here. It holds.", title=f"Doc {n}.{k}")
                    for k in range(CITED)
                ),
            )
            handles = hit_handles(formatted)
            cites = "; ".join(f"fact {n}.{k} [Doc {n}.{k}](#{h})" for k, h in enumerate(handles))
            answers.append(message_append(thread=thread, type="ai", content=f"As stated: {cites}."))
        return thread, answers

    plain, _ = build("Without verdicts")
    judged, answers = build("With verdicts")
    queue = ReviewQueue.objects.create(name="Bench")
    queue.owners.add(agent)
    queue.reviewers.add(*reviewers)
    queue.lead = lead
    queue.save()
    rows = [
        Verdict(
            thread=judged,
            message=answer,
            kind="citation",
            position=position,
            href=href,
            label=label,
            value="supports" if position == 1 else "partly_supports",
            note="Checked against the passage.",
            reviewer=reviewers[(index + position) % 2],
        )
        for index, answer in enumerate(answers)
        for position, (href, label) in enumerate(_citations(answer), start=1)
    ]
    for row in rows:
        row.save()
    judged.refresh_from_db()
    windows = MessageRender.objects.filter(thread=judged).values("window").distinct().count()
    print(
        f"Verdicts: {Verdict.objects.count()} on {judged.citations_resolved} citations of {ANSWERS} answers"
        f" ({judged.messages.count()} messages, {windows} page window)"
    )

    client = Client()
    client.force_login(lead)
    for thread in (plain, judged):  # warm: the evidence memo and the templates
        assert client.get(f"/threads/{thread.id}/").status_code == 200
    page = client.get(f"/threads/{judged.id}/").content.decode()
    chips = page.count('class="verdict-chip ')
    before = render_counter.count
    # Each sample starts from a collected heap: the previous sample's garbage would otherwise
    # be collected during whichever page comes next (each page's own collections still count).
    medians = interleaved_medians(
        {
            "without": lambda: client.get(f"/threads/{plain.id}/"),
            "with": lambda: client.get(f"/threads/{judged.id}/"),
        },
        repeat=REPEAT,
        before={"without": gc.collect, "with": gc.collect},
    )
    renders = render_counter.count - before
    show_time("page without verdicts", medians["without"], repeat=REPEAT)
    show_time("page with 200 verdicts", medians["with"], repeat=REPEAT)
    ok = show_ratio("200 verdicts: page with / page without", medians["with"] / medians["without"], TARGET)
    ok = show_count("verdict chips on the page", chips, 200) and ok
    ok = show_count("messages rendered while serving the pages", renders, 0) and ok
    return finish()


def _citations(answer: Any) -> list[tuple[str, str]]:
    from knowledgeweb.threads.models import MessageRender

    render = MessageRender.objects.get(message=answer)
    return [(str(c["href"]), str(c["label"])) for c in render.citations]


if __name__ == "__main__":
    raise SystemExit(main())
