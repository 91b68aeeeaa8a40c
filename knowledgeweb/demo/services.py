"""The one-command demo: the sample corpus, a demo user, a local binding and demo threads.

Every step is idempotent, so ``manage.py demo`` (and ``make run``) can run any
number of times and leaves one copy of everything: files already ingested are
unchanged, the user and binding are reused, and a demo thread whose title
exists is kept (``rebuild=True`` replaces the demo threads instead).

Threads are built through the real path, the one turn service every Ask uses
(``turn_ask``): the retrieval service searches the local binding, and the extractive
composer writes the answer. The demo is run by the operator, so its questions count
against no one's limit on questions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction

from knowledgeweb.bindings.choices import BindingScope
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.composer.services import turn_ask
from knowledgeweb.composer.turn import EXTRACTIVE
from knowledgeweb.environment import env_str
from knowledgeweb.library.selectors import collection_by_name
from knowledgeweb.library.services import IngestReport, paths_ingest
from knowledgeweb.retrieval.service import TOOL_OUTPUT_LIMIT
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.services import message_append

DEMO_USERNAME = "demo"
#: A local demo's password, printed by the command; override with KNOWLEDGEWEB_DEMO_PASSWORD.
DEFAULT_DEMO_PASSWORD = "knowledgeweb-demo"  # noqa: S105 - documented, printed, local demo only
PASSWORD_ENV = "KNOWLEDGEWEB_DEMO_PASSWORD"  # noqa: S105 - the variable's name, not a value
COLLECTION = "Sample corpus"
BINDING = "local-sample-corpus"

#: Small enough that the budget thread's retrieval is cut (docs/contract.md#formatting-and-budgets).
DEMO_OUTPUT_LIMIT = 1500

# A well-formed handle that no tool message provides: the hash of a fixed phrase,
# so it is stable across runs and cannot collide with real evidence by accident.
UNRESOLVED_HANDLE = (
    "knowledge-source-" + hashlib.sha256(b"knowledgeweb demo: a source nobody retrieved").hexdigest()[:32]
)
UNRESOLVED_NOTE = (
    "A note from the demo, written to show what an unverifiable citation looks like. "
    "The next citation uses a well-formed handle, but no tool message in this thread provides "
    "evidence for it, so the viewer shows it as an inert label instead of a link: "
    f"[citation:A source nobody retrieved](#{UNRESOLVED_HANDLE}). "
    "The citations in the answer above resolve, because the search before it returned their evidence."
)


@dataclass(frozen=True)
class DemoThread:
    title: str
    question: str
    output_limit: int = TOOL_OUTPUT_LIMIT
    epilogue: str = ""


DEMO_THREADS = (
    DemoThread(
        title="Demo: how citations are resolved",
        question="How does the viewer resolve a citation against the evidence of earlier tool messages?",
    ),
    DemoThread(
        title="Demo: the Gettysburg Address, with its source URL",
        question="What did Lincoln ask the living to resolve, and what new birth of freedom did he hope for?",
    ),
    DemoThread(
        title="Demo: an honestly unresolved citation",
        question="What should a reviewer do when a citation is unresolved?",
        epilogue=UNRESOLVED_NOTE,
    ),
    DemoThread(
        title="Demo: tool output cut by the output budget",
        question="What happens to evidence that no longer appears in full after the tool output is cut?",
        output_limit=DEMO_OUTPUT_LIMIT,
    ),
)


@dataclass(frozen=True)
class DemoResult:
    report: IngestReport
    user: User
    password: str
    binding: KnowledgeBinding
    created: list[Thread]
    kept: list[Thread]


def corpus_path() -> Path:
    return Path(settings.BASE_DIR) / "sample_corpus" / "documents"


def demo_password() -> str:
    return (env_str(PASSWORD_ENV) or "").strip() or DEFAULT_DEMO_PASSWORD


def demo_user_ensure(*, password: str) -> User:
    """The demo user, created when missing; its password is (re)set so the printed one works."""
    user = User.objects.filter(username=DEMO_USERNAME).first() or User(username=DEMO_USERNAME)
    user.set_password(password)
    user.full_clean()
    user.save()
    return user


def demo_binding_ensure(*, user: User) -> KnowledgeBinding:
    """The local binding over the demo collection only, bound to ``user``.

    It selects the sample corpus rather than serving every collection, so documents an
    admin ingests later reach the demo user only when the admin says so. An existing
    binding is kept as the admin left it.
    """
    binding = KnowledgeBinding.objects.filter(name=BINDING).first()
    if binding is None:
        collection = collection_by_name(name=COLLECTION)
        selection = [] if collection is None else [{"dataset_id": str(collection.pk), "document_ids": []}]
        binding = binding_create(
            name=BINDING,
            provider="local",
            tools=["knowledge_search"],
            users=[user],
            scope=BindingScope.SELECTED if selection else BindingScope.ALL,
            selection=selection,
        )
        # What the Ask page offers readers (an admin may change it).
        binding.title = "Sample corpus"
        binding.description = (
            "The demo documents: how citations resolve, the local index, providers, Lincoln."
        )
        binding.save(update_fields=["title", "description"])
        return binding
    binding.users.add(user)
    return binding


def demo_threads_build(*, user: User, rebuild: bool = False) -> tuple[list[Thread], list[Thread]]:
    """(created, kept) demo threads; each is written whole or not at all."""
    created: list[Thread] = []
    kept: list[Thread] = []
    for spec in DEMO_THREADS:
        with transaction.atomic():
            existing = Thread.objects.filter(owner=user, title=spec.title)
            if rebuild:
                existing.delete()
            elif existing.exists():
                kept.append(existing.order_by("created_at").first())  # type: ignore[arg-type]
                continue
            result = turn_ask(
                user=user,
                question=spec.question,
                binding_name=BINDING,
                rate_key=None,
                composer=EXTRACTIVE,
                title=spec.title,
                output_limit=spec.output_limit,
            )
            thread = Thread.objects.get(pk=result.thread_id)
            if spec.epilogue:
                message_append(thread=thread, type="ai", content=spec.epilogue)
            created.append(thread)
    return created, kept


def demo_run(*, rebuild: bool = False, on_file: Callable[[int, int, Path], None] | None = None) -> DemoResult:
    """Everything ``manage.py demo`` does."""
    report = paths_ingest(
        collection_name=COLLECTION,
        paths=[corpus_path()],
        key_root=Path(settings.BASE_DIR),
        on_file=on_file,
    )
    password = demo_password()
    user = demo_user_ensure(password=password)
    binding = demo_binding_ensure(user=user)
    created, kept = demo_threads_build(user=user, rebuild=rebuild)
    return DemoResult(report, user, password, binding, created, kept)
