"""The review dataset streams: its memory follows the largest thread, not the queue.

Builds one queue of threads whose answer cites 19 sources (20 items each), judged by two
reviewers (40 verdicts a thread), then consumes the whole export (JSONL and CSV) and takes
tracemalloc's peak: first at 5,000 verdicts, then, with more threads added, at 50,000.
Target: the peak at 50,000 is at most 1.2x the peak at 5,000 (issue 27). Threads are
cloned row for row from one written through the real services (messages, renders), so the
export reads what a real thread stores.
"""

from __future__ import annotations

import gc
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

if __package__ in {None, ""}:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import finish, info, setup_django, verdict

CITATIONS = 19
REVIEWERS = 2
VERDICTS_PER_THREAD = (CITATIONS + 1) * REVIEWERS
SMALL, LARGE = 5_000, 50_000


def main() -> int:
    setup_django()
    from django.contrib.auth import get_user_model

    from knowledgeweb.knowledge import RetrievalHit, RetrievalResult, format_result_view
    from knowledgeweb.review.dataset import export_lines
    from knowledgeweb.review.items import threads_items
    from knowledgeweb.review.models import ReviewQueue, Verdict
    from knowledgeweb.threads.models import Message, MessageRender, Thread
    from knowledgeweb.threads.services import message_append, thread_create

    users = get_user_model().objects
    agent = users.create_user("agent", password="bench-password-1")
    reviewers = [users.create_user(f"reviewer{n}", password="bench-password-1") for n in range(REVIEWERS)]
    queue = ReviewQueue.objects.create(name="Bench", overlap=REVIEWERS)
    queue.owners.set([agent])
    queue.reviewers.set(reviewers)

    model = thread_create(owner=agent, title="Model thread", agent_name="bench")
    message_append(thread=model, type="human", content="What do the documents say about the budget?")
    hits = tuple(
        RetrievalHit(text=f"Budget fact number {n}: the figure rose by {n} percent.", title=f"doc-{n}.md")
        for n in range(CITATIONS)
    )
    formatted = format_result_view(RetrievalResult(provider="local", query="budget", hits=hits))
    message_append(
        thread=model,
        type="tool",
        name="knowledge_search",
        content=formatted.content,
        artifact=formatted.artifact,
        trusted=True,
        tool_view=formatted.view,
    )
    handles = [str(h["handle"]) for h in formatted.view["hits"] if h.get("kind") == "document"]
    answer = " ".join(f"The figure rose by {n} percent [doc-{n}](#{h})." for n, h in enumerate(handles))
    message_append(thread=model, type="ai", content=answer)
    messages = list(Message.objects.filter(thread=model).order_by("seq"))
    renders = {r.message_id: r for r in MessageRender.objects.filter(thread=model)}
    items = threads_items([model.id])[model.id].items
    assert len(items) == CITATIONS + 1, len(items)
    answer_message = next(m for m in messages if m.type == "ai")

    def verdicts_on(thread: Any, message_id: UUID) -> list[Any]:
        """Every reviewer's verdict on every item of the model answer, as copied to ``thread``."""
        return [
            Verdict(
                thread=thread,
                message_id=message_id,
                kind=item.key.kind,
                position=item.key.position,
                href=item.href,
                label=item.label,
                value=("supports" if item.key.kind == "citation" else "acceptable"),
                note="A note.",
                reviewer=reviewer,
            )
            for item in items
            for reviewer in reviewers
        ]

    def add_threads(count: int, batch: int = 100) -> None:
        """Clone the model thread ``count`` times, judged by every reviewer, in bulk batches."""
        for offset in range(0, count, batch):
            threads = Thread.objects.bulk_create(
                [
                    Thread(owner=agent, title="Cloned thread", agent_name="bench")
                    for _ in range(min(batch, count - offset))
                ]
            )
            copies, shown, judged = [], [], []
            for thread in threads:
                ids = {m.id: uuid4() for m in messages}
                copies += [
                    Message(
                        id=ids[m.id],
                        thread=thread,
                        seq=m.seq,
                        type=m.type,
                        name=m.name,
                        content=m.content,
                        artifact=m.artifact,
                        status=m.status,
                        digest=m.digest,
                        tool_view=m.tool_view,
                    )
                    for m in messages
                ]
                shown += [
                    MessageRender(
                        message_id=ids[m.id],
                        thread=thread,
                        seq=m.seq,
                        renderer_version=renders[m.id].renderer_version,
                        html=renders[m.id].html,
                        citations=renders[m.id].citations,
                        sources=renders[m.id].sources,
                        entries=renders[m.id].entries,
                        export=renders[m.id].export,
                        uncited=renders[m.id].uncited,
                        text=renders[m.id].text,
                    )
                    for m in messages
                ]
                judged += verdicts_on(thread, ids[answer_message.id])
            Message.objects.bulk_create(copies, batch_size=500)
            MessageRender.objects.bulk_create(shown, batch_size=500)
            Verdict.objects.bulk_create(judged, batch_size=1000)

    def peak(format: str) -> tuple[int, int]:
        gc.collect()
        started = time.perf_counter()
        tracemalloc.start()
        lines = sum(1 for _ in export_lines(queue, format))
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        info(
            f"{format} export under tracemalloc, {lines:,} lines",
            time.perf_counter() - started,
            unit=" s",
            digits=1,
        )
        return top, lines

    threads_small = SMALL // VERDICTS_PER_THREAD
    started = time.perf_counter()
    add_threads(threads_small - 1)  # the model thread is judged below
    Verdict.objects.bulk_create(verdicts_on(model, answer_message.id))
    info("building 5,000 verdicts", time.perf_counter() - started, unit=" s", digits=1)
    small = {fmt: peak(fmt) for fmt in ("jsonl", "csv")}
    add_threads(LARGE // VERDICTS_PER_THREAD - threads_small)
    print(f"verdicts stored: {Verdict.objects.count():,}")
    large = {fmt: peak(fmt) for fmt in ("jsonl", "csv")}
    for fmt in ("jsonl", "csv"):
        (small_peak, small_lines), (large_peak, large_lines) = small[fmt], large[fmt]
        print(
            f"{fmt}: {small_lines:,} lines, peak {small_peak / 2**20:.2f} MiB at 5,000 verdicts; "
            f"{large_lines:,} lines, peak {large_peak / 2**20:.2f} MiB at 50,000"
        )
        verdict(f"review export {fmt}: peak at 50,000 verdicts / peak at 5,000", large_peak / small_peak, 1.2)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
