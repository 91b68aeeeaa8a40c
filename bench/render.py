"""Thread render through the real view, against markdown-it + bleach alone.

Threads of 50, 200 and 800 messages: half are tool messages with 20 cited hits
each, half are AI messages with 10 citations each mixing both shared anchor
forms plus a forged citation in every fourth answer.

The page is windowed (issue 25): a GET sends the thread's latest window.

- floor: markdown-it + bleach over the messages the page SENDS (its window), no
  citation work, no cache
- first: the first GET /threads/<id>/ after the thread was written, with an empty cache:
  the write rendered every message and stored the last window's page (decision 0108), so
  the view reads that page, the reader's access and the window's verdicts
- warm:  the same GET again (nothing is cached between views but what Django caches)
- stale: a GET right after a renderer change that raised the minimum safe
  version: every message is rendered in memory in seq order, nothing is stored
  (a GET after an ordinary renderer change serves the stored renders: "warm")
- rerender: ``thread_rerender`` after a renderer change (what ``manage.py
  rerender`` does per thread after a deploy): every message re-rendered and stored, with
  the text analysis caches empty, as in the fresh process a deploy runs it in (left warm,
  the caches held the 200-message thread's sentences but not the 800-message one's, and the
  scaling below read 1.25-1.36 where cold runs of both read 0.97-1.02)
- write: importing the thread, which renders every message once
- weight: the bytes of the first paint (the page as sent)

A 2,000-message thread is measured for its views only (floor, first, warm), side by side
with the 200-message thread's warm view: a view must not cost more as the thread grows.
"""

from __future__ import annotations

import random
import sys
from typing import Any

if __package__ in {None, ""}:
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))

from bench.harness import (
    finish,
    info,
    interleaved_medians,
    median_seconds,
    setup_django,
    show_count,
    show_ratio,
    show_time,
    verdict,
)

SIZES = (50, 200, 800, 2000)
WARM_REPEAT = 21
#: Sizes whose write, stale view and re-render are measured too (2,000 costs minutes to write
#: five times; its view is what the targets are about).
FULL_SIZES = (50, 200, 800)
WORDS = [
    "evidence",
    "retrieval",
    "citation",
    "answer",
    "document",
    "dataset",
    "excerpt",
    "provider",
    "source",
    "index",
    "thread",
    "message",
    "reader",
    "review",
    "model",
    "query",
    "chunk",
    "page",
    "title",
    "budget",
    "trust",
]


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:]


def build_messages(count: int, seed: int = 7) -> list[dict[str, object]]:
    from knowledgeweb.knowledge import RetrievalHit, RetrievalResult, format_result

    rng = random.Random(seed)
    messages: list[dict[str, object]] = []
    for turn in range(count // 2):
        hits = tuple(
            RetrievalHit(
                text=" ".join(_sentence(rng, 6) + "." for _ in range(5)),
                title=f"Handbook {turn}-{position}.md",
                dataset_name="Bench corpus",
                page=position + 1,
            )
            for position in range(20)
        )
        content, artifact = format_result(
            RetrievalResult(provider="local", query=f"question {turn}", hits=hits), max_total_chars=20_000
        )
        ids = [record["id"] for record in artifact["knowledge_sources"]]
        assert len(ids) == 20, "every hit must be shown and cited"
        messages.append(
            {"type": "tool", "name": "knowledge_search", "content": content, "artifact": artifact}
        )
        lines = []
        for k in range(10):
            if k == 9 and turn % 4 == 0:
                href = "#knowledge-source-" + "".join(rng.choice("0123456789abcdef") for _ in range(32))
            elif k % 2:
                href = f"#user-content-knowledge-source-{ids[k]}"
            else:
                href = f"#knowledge-source-{ids[k]}"
            lines.append(f"{_sentence(rng, 14)} [citation:Handbook {turn}-{k}]({href}).")
        messages.append({"type": "ai", "content": "\n\n".join(lines)})
    return messages


def main() -> int:
    setup_django()
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.db.models import Max
    from django.test import Client

    from knowledgeweb.knowledge.linkgrammar import parse_counter
    from knowledgeweb.knowledge.text import text_caches_clear
    from knowledgeweb.threads.evidence import validation_counter
    from knowledgeweb.threads.interchange.imports import thread_import
    from knowledgeweb.threads.models import Message, MessageRender
    from knowledgeweb.threads.rendering import version
    from knowledgeweb.threads.rendering.markdown import markdown_to_html
    from knowledgeweb.threads.rendering.pipeline import render_counter
    from knowledgeweb.threads.rendering.sanitizer import sanitize_html
    from knowledgeweb.threads.services import message_append
    from knowledgeweb.threads.services.renders import thread_rerender

    user = get_user_model().objects.create_user("bench", password="bench-password-1")
    client = Client()
    client.force_login(user)

    def new_renderer() -> None:
        # A deploy of a safety fix: every stored render falls below the minimum safe version.
        version.RENDERER_VERSION += 1
        version.MIN_SAFE_RENDERER_VERSION = version.RENDERER_VERSION

    def deployed() -> None:
        # The renderer change, and the re-render in a fresh process: nothing memoized yet.
        new_renderer()
        text_caches_clear()

    print("Thread render (GET /threads/<id>/)")
    stale_by_size: dict[int, float] = {}
    rerender_by_size: dict[int, float] = {}
    gets: dict[int, Any] = {}
    threads: dict[int, Any] = {}
    for size in SIZES:
        raw = build_messages(size)
        thread = threads[size] = thread_import(owner=user, title=f"Bench {size}", messages=raw, trusted=True)
        last = MessageRender.objects.filter(thread=thread).aggregate(last=Max("window"))["last"]
        sent_ids = MessageRender.objects.filter(thread=thread, window=last).values_list(
            "message_id", flat=True
        )
        # The floor is over what the page sends: the messages of its window.
        sent = list(Message.objects.filter(pk__in=list(sent_ids)).order_by("seq"))
        url = f"/threads/{thread.id}/"

        def floor(sent: list[Message] = sent) -> None:
            for message in sent:
                sanitize_html(markdown_to_html(message.content))

        everything = list(Message.objects.filter(thread=thread).order_by("seq"))

        def floor_all(stored: list[Message] = everything) -> None:
            for message in stored:
                sanitize_html(markdown_to_html(message.content))

        def get(url: str = url) -> None:
            response = client.get(url)
            if response.status_code != 200:
                raise RuntimeError(f"{url} answered {response.status_code}")

        def write(raw: list[dict[str, object]] = raw) -> None:
            thread_import(owner=user, title="Bench write", messages=raw, trusted=True)

        def rerender(thread: Any = thread) -> None:
            thread_rerender(thread=thread)

        gets[size] = get
        actions: dict[str, Any] = {"floor": floor, "first": get}
        if size in FULL_SIZES:
            actions.update({"floor_all": floor_all, "stale": get, "rerender": rerender, "write": write})
        medians = interleaved_medians(
            actions, before={"first": cache.clear, "stale": new_renderer, "rerender": deployed}
        )
        thread_rerender(thread=thread)  # every render is current again
        # A warm view is a few milliseconds: five samples let one scheduler slice move the median
        # by a tenth, so it takes the median of more (the floor's rounds are 50-100 ms each).
        warm_s = median_seconds(get, repeat=WARM_REPEAT)
        floor_s = medians["floor"]
        weight = len(client.get(url).content)
        print(f" {size} messages ({len(sent)} sent: window {last})")
        show_time("floor: markdown-it + bleach over the sent messages", floor_s)
        show_time("first view (rendered at write), empty cache", medians["first"])
        show_time("warm view", warm_s, repeat=WARM_REPEAT)
        show_ratio(f"render, {size} messages: first view / floor", medians["first"] / floor_s, 0.1)
        show_ratio(f"render, {size} messages: warm view / floor", warm_s / floor_s, 0.05)
        verdict(f"render, {size} messages: page weight at first paint", weight / 1_000_000, 1.0, unit=" MB")
        if size in FULL_SIZES:
            stale_by_size[size] = medians["stale"]
            rerender_by_size[size] = medians["rerender"]
            show_time("view below the minimum safe version (in memory)", medians["stale"])
            show_time("rerender of the thread after a renderer change", medians["rerender"])
            show_time("write: import, rendering every message", medians["write"])
            # Below the minimum safe version the whole thread is rendered again in memory (its
            # evidence comes from every message before): against the floor of the whole thread.
            show_time("floor of the whole thread (markdown-it + bleach)", medians["floor_all"])
            show_ratio(
                f"render, {size} messages: view below the minimum safe version / whole-thread floor",
                medians["stale"] / medians["floor_all"],
                1.3,
            )
            info("write / floor", medians["write"] / floor_s)
            info("rerender / floor", medians["rerender"] / floor_s)

        if size == 800:
            print(" Counts (800 messages)")
            cache.clear()
            validation_counter.reset()
            render_counter.reset()
            parse_counter.reset()
            get()
            show_count("render, 800 messages: validations on the first view", validation_counter.count, 0)
            show_count("render, 800 messages: markdown parses on the first view", parse_counter.count, 0)
            get()
            show_count("render, 800 messages: validations on the second view", validation_counter.count, 0)
            show_count("render, 800 messages: markdown renders on the second view", render_counter.count, 0)
            message_append(thread=thread, type="tool", name="knowledge_search", content="Nothing found.")
            show_count(
                "render, 800 messages: validations for one append (at write)", validation_counter.count, 1
            )
            validation_counter.reset()
            get()
            show_count("render, 800 messages: validations on the view after it", validation_counter.count, 0)

    print(" Scaling")
    # Both threads' renders current (the later sizes' renderer changes left the 200-message
    # thread below the minimum safe version, which a view would render in memory).
    for size in (200, 2000):
        thread_rerender(thread=threads[size])
    views = interleaved_medians({"200": gets[200], "2000": gets[2000]})
    show_time("warm view, 200 messages", views["200"])
    show_time("warm view, 2,000 messages", views["2000"])
    show_ratio("render: 2,000-message view / 200-message view", views["2000"] / views["200"], 1.1)
    scaling = (rerender_by_size[800] / rerender_by_size[200]) / 4
    show_ratio("render: (800-message re-render / 200-message re-render) / 4", scaling, 1.1)
    info(
        "(800-message view below the minimum safe version / 200) / 4",
        (stale_by_size[800] / stale_by_size[200]) / 4,
    )
    return finish()


if __name__ == "__main__":
    sys.exit(main())
