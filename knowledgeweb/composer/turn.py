"""What a turn carries from ``turn_prepare`` to its write, and what it answers (``composer.services``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal
from uuid import UUID

from django.contrib.auth.models import User

from knowledgeweb.composer.client import ChatServer
from knowledgeweb.composer.errors import ModelError
from knowledgeweb.composer.models import AnswerModel
from knowledgeweb.composer.prompt import Prompt
from knowledgeweb.knowledge import Evidence
from knowledgeweb.retrieval import SearchOutcome
from knowledgeweb.threads.models import Thread

#: The composer choice that needs no configuration.
EXTRACTIVE = "extractive"


@dataclass
class PreparedTurn:
    user: User
    question: str
    thread: Thread | None
    agent_name: str
    outcome: SearchOutcome
    #: Every handle the answer may cite: earlier tool messages' evidence, then this turn's.
    available: dict[str, Evidence]
    model: AnswerModel | None = None
    server: ChatServer | None = field(default=None, repr=False)
    prompt: Prompt | None = None
    #: A fault known before any model call (context over budget).
    fault: ModelError | None = None
    #: The numbers the thread's page gives the sources its answers already cite.
    numbers: dict[str, int] = field(default_factory=dict)
    #: The new thread's title (a follow-up keeps its thread's).
    title: str = ""


@dataclass(frozen=True)
class CitationCounts:
    total: int
    resolved: int
    unresolved: int
    malformed: int
    by_reason: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "resolved": self.resolved,
            "unresolved": self.unresolved,
            "malformed": self.malformed,
            "by_reason": self.by_reason,
        }


@dataclass(frozen=True)
class TurnResult:
    thread_id: UUID
    message_id: UUID
    status: Literal["answered", "failed"]
    composer: str
    code: str
    detail: str
    citations: CitationCounts
    context: dict[str, Any]


@dataclass(frozen=True)
class Event:
    """``sentence`` (parts of the preview), ``heartbeat`` (the model is silent) or ``done`` (a TurnResult)."""

    kind: Literal["sentence", "heartbeat", "done"]
    data: Any
