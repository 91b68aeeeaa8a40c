"""Twenty reviewers working one queue through `make serve` for a bounded time (issue 27).

Starts `make serve` on PostgreSQL and Redis when they answer on 127.0.0.1 (SQLite and the
in-process cache otherwise, said so). Builds an overlap-1 queue of threads whose answer
cites two sources (three items each), and twenty reviewers with a token each. Every
reviewer loops until the time is up or the queue has nothing left for them:
``POST /api/review/queues/{id}/next``, ``GET /api/threads/{id}/review``, then one ``PUT``
verdict per item. Then it counts:

- verdicts stored = verdicts acknowledged (every 2xx verdict is a row, and no other row);
- double reservations: threads handed to two different reviewers (overlap 1, holds far
  longer than the run, and every reviewer finishes a thread before asking again, so any
  thread handed out twice is one);
- p50 and p99 of a verdict and of "next".

Environment: REVIEW_SECONDS (default 30), REVIEW_REVIEWERS (20), REVIEW_THREADS (400),
REVIEW_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/knowledgeweb_review_load,
created when missing), REVIEW_CACHE_URL (default redis://127.0.0.1:6379/13, emptied first).
`make loadtest` runs the same reviewers as its fourth phase (``bench/load.py``).
"""

from __future__ import annotations

import os
import secrets
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import httpx

if __package__ in {None, ""}:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import finish, verdict
from bench.load import Recorder, choose_backends, free_port, percentile, start_server, stop

#: The write limit the server runs with here: the bench measures the queue, not the limit.
WRITE_LIMIT = "100000/minute"


@dataclass
class ReviewFixture:
    queue_id: int
    tokens: list[str]
    threads: int


@dataclass
class Outcome:
    recorder: Recorder
    seconds: float
    acknowledged: int = 0
    handed: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    exhausted: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def build_review_fixture(reviewers: int, threads: int) -> ReviewFixture:
    """An overlap-1 queue of ``threads`` cited threads and ``reviewers`` reviewers with tokens
    (Django must be set up on the server's database)."""
    from django.contrib.auth.models import User

    from knowledgeweb.accounts.services import token_create
    from knowledgeweb.knowledge import RetrievalHit, RetrievalResult, format_result_view
    from knowledgeweb.review.models import ReviewQueue
    from knowledgeweb.threads.services import message_append, thread_create

    User.objects.filter(username__startswith="review-load-").delete()
    ReviewQueue.objects.filter(name="Review load").delete()
    agent = User.objects.create_user("review-load-agent", password=secrets.token_urlsafe(16))
    people = [
        User.objects.create_user(f"review-load-{n}", password=secrets.token_urlsafe(16))
        for n in range(reviewers)
    ]
    queue = ReviewQueue.objects.create(name="Review load", overlap=1, reservation_minutes=60)
    queue.owners.set([agent])
    queue.reviewers.set(people)
    for n in range(threads):
        thread = thread_create(owner=agent, title=f"Review load {n}", agent_name="load")
        message_append(thread=thread, type="human", content=f"Question {n}?")
        hits = tuple(
            RetrievalHit(text=f"Fact {n}.{h} of the review load.", title=f"doc-{h}.md") for h in range(2)
        )
        formatted = format_result_view(RetrievalResult(provider="local", query=f"q{n}", hits=hits))
        message_append(
            thread=thread, type="tool", name="knowledge_search", content=formatted.content,
            artifact=formatted.artifact, trusted=True, tool_view=formatted.view,
        )  # fmt: skip
        handles = [str(h["handle"]) for h in formatted.view["hits"] if h.get("kind") == "document"]
        cited = " ".join(f"Claim {h} holds [doc-{h}](#{handle})." for h, handle in enumerate(handles))
        message_append(thread=thread, type="ai", content=cited)
    tokens = [token_create(user=person, name="review-load")[1] for person in people]
    return ReviewFixture(queue_id=queue.pk, tokens=tokens, threads=threads)


def _reviewer(base: str, fixture: ReviewFixture, index: int, outcome: Outcome, stop_at: float) -> None:
    headers = {"Authorization": f"Bearer {fixture.tokens[index]}"}
    recorder = outcome.recorder
    with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
        while time.monotonic() < stop_at:
            started = time.perf_counter()
            try:
                response = client.post(f"/api/review/queues/{fixture.queue_id}/next")
            except httpx.HTTPError as exc:
                recorder.record("POST next", 0, None, type(exc).__name__)
                continue
            recorder.record("POST next", time.perf_counter() - started, response.status_code)
            if response.status_code == 204:
                with outcome.lock:
                    outcome.exhausted += 1
                return
            if response.status_code != 200:
                recorder.record("POST next", 0, None, f"status {response.status_code}")
                continue
            thread_id = response.json()["thread_id"]
            with outcome.lock:
                outcome.handed[thread_id].add(index)
            review = client.get(f"/api/threads/{thread_id}/review")
            if review.status_code != 200:
                recorder.record("GET review", 0, None, f"status {review.status_code}")
                continue
            for item in review.json()["items"]:
                if not item["judgeable"]:
                    continue
                path = (
                    f"/api/threads/{thread_id}/review/citations/{item['message_id']}/{item['position']}"
                    if item["kind"] == "citation"
                    else f"/api/threads/{thread_id}/review/answers/{item['message_id']}"
                )
                started = time.perf_counter()
                try:
                    put = client.put(path, json={"verdict": item["allowed"][0], "note": "load"})
                except httpx.HTTPError as exc:
                    recorder.record("PUT verdict", 0, None, type(exc).__name__)
                    continue
                recorder.record("PUT verdict", time.perf_counter() - started, put.status_code)
                if 200 <= put.status_code < 300:
                    with outcome.lock:
                        outcome.acknowledged += 1
                else:
                    recorder.record("PUT verdict", 0, None, f"status {put.status_code}")


def run_reviewers(base: str, fixture: ReviewFixture, seconds: float) -> Outcome:
    """Every reviewer at once until ``seconds`` have passed or nothing is left for them."""
    outcome = Outcome(recorder=Recorder(), seconds=seconds)
    stop_at = time.monotonic() + seconds
    started = time.monotonic()
    workers = [
        threading.Thread(target=_reviewer, args=(base, fixture, n, outcome, stop_at), daemon=True)
        for n in range(len(fixture.tokens))
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=seconds + 120)
    outcome.seconds = time.monotonic() - started
    return outcome


def report_reviewers(outcome: Outcome, *, verdicts: bool) -> None:
    """Print the counts and latencies; ``verdicts`` also prints the harness's verdict lines."""
    from knowledgeweb.review.models import ReviewQueue, Verdict

    queue = ReviewQueue.objects.get(name="Review load")
    stored = Verdict.objects.filter(thread__owner__username="review-load-agent").count()
    doubles = sum(1 for reviewers in outcome.handed.values() if len(reviewers) > 1)
    recorder = outcome.recorder
    print(
        f"\nreviewers: {len(outcome.handed)} threads handed out in {outcome.seconds:.1f} s (queue {queue.pk})"
    )
    for route in ("POST next", "PUT verdict"):
        values = recorder.latencies.get(route, [])
        statuses = ", ".join(f"{code}x{count}" for code, count in sorted(recorder.statuses[route].items()))
        if values:
            print(
                f"  {route:12} {len(values):6d} requests  p50 {percentile(values, 0.5) * 1000:7.1f} ms  "
                f"p99 {percentile(values, 0.99) * 1000:7.1f} ms  {statuses}; errors: {len(recorder.errors[route])}"
            )
    print(f"  verdicts acknowledged {outcome.acknowledged}, stored {stored}; double reservations {doubles}")
    print(f"  reviewers told nothing is left (204): {outcome.exhausted}")
    if verdicts:
        verdict("review load: verdicts stored - verdicts acknowledged", abs(stored - outcome.acknowledged), 0)
        verdict("review load: double reservations", doubles, 0)
        verdict("review load: verdicts acknowledged", outcome.acknowledged, 1, compare=">=")


def main() -> int:
    seconds = float(os.environ.get("REVIEW_SECONDS", "30"))
    reviewers = int(os.environ.get("REVIEW_REVIEWERS", "20"))
    threads = int(os.environ.get("REVIEW_THREADS", "400"))
    workdir = Path(tempfile.mkdtemp(prefix="kw-review-load-"))
    backends = choose_backends(
        workdir,
        database=os.environ.get(
            "REVIEW_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/knowledgeweb_review_load"
        ),
        cache=os.environ.get("REVIEW_CACHE_URL", "redis://127.0.0.1:6379/13"),
        sqlite_name="review.sqlite3",
    )
    database, cache = backends.database_url, backends.cache_url
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "CACHE_URL", "DEBUG"))},
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        "HOST": "127.0.0.1",
        "PORT": str(free_port()),
        "DATABASE_URL": database,
        "CACHE_URL": cache,
        "STATIC_ROOT": str(workdir / "static"),
        "SECURE_COOKIES": "0",
        "LOG_LEVEL": "WARNING",
        "RATE_LIMIT_WRITE": WRITE_LIMIT,
    }
    print(f"backends: {backends.note}")
    print(f"load: {reviewers} reviewers, {threads} threads of 3 items, overlap 1, {seconds:g} s")
    print(f"rate limits: write={WRITE_LIMIT} (raised: the bench measures the queue, not the limit)")
    os.environ.update({"DATABASE_URL": database, "CACHE_URL": cache, "SECRET_KEY": env["SECRET_KEY"]})
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "knowledgeweb.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    fixture = build_review_fixture(reviewers, threads)
    try:
        # `make serve` without its install step: `make bench` (or whoever runs this) installed.
        server, base = start_server(env, workdir / "serve.log", ("make", "-s", "-o", "install", "serve"))
    except RuntimeError as exc:
        print(f"could not measure: {exc}")
        return 1
    try:
        outcome = run_reviewers(base, fixture, seconds)
    finally:
        stop(server)
    if not outcome.recorder.latencies.get("PUT verdict"):
        print("could not measure: no verdict was recorded")
        return 1
    report_reviewers(outcome, verdicts=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
