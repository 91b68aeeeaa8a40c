"""Threads for the navigation, phone, layout and accessibility tests, built through the real services."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User

from knowledgeweb.demo.services import demo_binding_ensure, demo_threads_build
from knowledgeweb.knowledge import RetrievalHit
from knowledgeweb.library.services.ingest import paths_ingest
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.services import message_append, thread_create
from tests.e2e.scenarios import retrieve

LONG_URL = "https://example.org/" + "a-very-long-path-segment-" * 20


def demo_threads(owner: User) -> list[Thread]:
    """The demo corpus in the local index, a binding for ``owner`` and the demo threads, as
    ``manage.py demo`` builds them (through retrieval and the extractive composer)."""
    paths_ingest(
        collection_name="Sample corpus",
        paths=[Path(settings.BASE_DIR) / "sample_corpus" / "documents"],
        key_root=Path(settings.BASE_DIR),
    )
    binding = demo_binding_ensure(user=owner)
    binding.title = "Sample corpus"
    binding.description = "The demo documents: citations, the local index, providers, Lincoln."
    binding.save()
    created, kept = demo_threads_build(user=owner)
    return created + kept


def long_thread(owner: User, turns: int = 30) -> Thread:
    """``turns`` questions, each with a retrieval and a cited answer; some answers carry
    Markdown headings, a forged citation, a long URL or a long code line."""
    thread = thread_create(owner=owner, title="A long review: " + "unbreakable" * 12)
    for turn in range(1, turns + 1):
        question = f"Question about topic {turn}: what does source {turn} say?"
        if turn == 2:
            question = f"What is at {LONG_URL}?"
        message_append(thread=thread, type="human", content=question)
        _, (source,) = retrieve(
            thread, RetrievalHit(text=f"Topic {turn} holds fact {turn}. " * 4, title=f"Source {turn}")
        )
        answer = f"Topic {turn} holds fact {turn} [citation:Source {turn}](#{source.handle})."
        if turn % 3 == 0:
            answer = f"# Summary {turn}\n\n## Detail\n\n{answer} A guess [x](#knowledge-source-{'0' * 32})."
        if turn == 4:
            answer += f"\n\n```\n{'x_' * 200}\n```\n\n{LONG_URL}"
        message_append(thread=thread, type="ai", content=answer)
    return thread
