"""A turn: question -> search -> answer (extractive, or streamed from an answer model) -> the thread.

``turn_prepare`` does everything that may refuse before anything is written: the
question, the answer model's authorization and configuration, and the search
(outside any transaction, so a slow provider holds no lock). ``turn_events`` then
streams the answer and, once it is complete or has failed, writes the whole turn
in one short transaction: the question, the tool message, and the answer exactly as
written (or, when the model failed, an error message saying why). A client that
disconnects while the answer streams closes the generator before that write, so
it leaves nothing; once the write has happened the answer is complete. Never half
an answer (docs/decisions.md, "LLM composer").
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from uuid import UUID

from django.contrib.auth.models import User
from django.db import transaction

from knowledgeweb.answers.errors import AnswerError
from knowledgeweb.answers.extractive import ExtractiveComposer
from knowledgeweb.answers.services import MAX_QUESTION_CHARS, TOOL, _title
from knowledgeweb.composer.client import ChatServer, chat_stream
from knowledgeweb.composer.errors import ModelError, ModelFault
from knowledgeweb.composer.live import SentenceStream
from knowledgeweb.composer.models import AnswerModel
from knowledgeweb.composer.prompt import ContextOverBudgetError, Prompt, Turn, build_prompt
from knowledgeweb.composer.selectors import answer_model_get, answer_model_key
from knowledgeweb.knowledge import Evidence, read_sources
from knowledgeweb.retrieval import (
    RetrievalError,
    RetrievalInvalidError,
    RetrievalRefusedError,
    SearchOutcome,
    retrieval_record,
    retrieval_search,
)
from knowledgeweb.threads.errors import QuotaExceededError
from knowledgeweb.threads.evidence import REASON_MALFORMED, REASON_UNRESOLVED, messages_sources
from knowledgeweb.threads.models import Message, MessageStatus, MessageType, Thread
from knowledgeweb.threads.quotas import quota_precheck
from knowledgeweb.threads.reports import REASON_ONLY_LATER
from knowledgeweb.threads.selectors import thread_citations, thread_messages, thread_source_numbers
from knowledgeweb.threads.services import message_append, thread_create

logger = logging.getLogger(__name__)

#: The composer choice that needs no configuration.
EXTRACTIVE = "extractive"

#: Stable reason codes for the citation report of an answer.
REASONS = {
    REASON_UNRESOLVED: "no_such_evidence",
    REASON_ONLY_LATER: "evidence_only_later",
    REASON_MALFORMED: "malformed",
}


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
    kind: Literal["delta", "sentence", "done"]
    data: Any


def turn_prepare(
    *,
    user: User,
    question: str,
    binding_name: str,
    composer: str = EXTRACTIVE,
    thread: Thread | None = None,
    agent_name: str = "",
) -> PreparedTurn:
    """Check everything and run the search; raise ``AnswerError`` (nothing written) on any refusal."""
    question = question.strip()
    if not question:
        raise AnswerError("Enter a question.", kind="question")
    if len(question) > MAX_QUESTION_CHARS:
        raise AnswerError(f"The question is longer than {MAX_QUESTION_CHARS} characters.", kind="question")
    try:
        # A user or thread at a quota is refused before the provider or the model is asked anything.
        quota_precheck(owner_id=user.pk, thread=thread, new_thread=thread is None)
    except QuotaExceededError as exc:
        raise AnswerError(str(exc), kind="quota") from exc
    model: AnswerModel | None = None
    server: ChatServer | None = None
    if composer != EXTRACTIVE:
        model = answer_model_get(user=user, agent_name=agent_name, name=composer)
        if model is None:
            raise AnswerError(f"No answer model named '{composer}' is available to you.", kind="binding")
        try:
            key = answer_model_key(model)
        except ModelError as exc:
            raise AnswerError(exc.message, kind="binding") from None
        server = ChatServer(
            label=f"Answer model '{model.name}'",
            base_url=model.base_url,
            model=model.model,
            timeout=float(model.timeout),
            temperature=model.temperature,
            max_output_tokens=model.max_output_tokens,
            api_key=key,
        )
    try:
        outcome = retrieval_search(
            user=user, tool=TOOL, query=question, agent_name=agent_name, binding_name=binding_name
        )
    except (RetrievalInvalidError, RetrievalRefusedError) as exc:
        raise AnswerError(str(exc), kind="binding") from exc
    except RetrievalError as exc:
        raise AnswerError(str(exc), kind="provider") from exc

    # Artifacts stay unloaded: memoized evidence needs none, and a miss loads only its own.
    earlier = thread_messages(thread=thread, with_artifacts=False) if thread is not None else []
    found = messages_sources(earlier)
    groups = [list(found.get(m.id, {}).values()) for m in earlier if m.type == MessageType.TOOL]
    groups.append(list(read_sources(outcome.tool, outcome.content, outcome.artifact).values()))
    available: dict[str, Evidence] = {}
    for group in groups:
        for source in group:
            available.setdefault(source.handle, source)  # the first to claim a handle keeps it
    prepared = PreparedTurn(
        user=user,
        question=question,
        thread=thread,
        agent_name=agent_name,
        outcome=outcome,
        available=available,
        model=model,
        server=server,
        numbers=thread_source_numbers(thread=thread) if thread is not None else {},
    )
    if model is not None:
        turns = [
            Turn("user" if m.type == MessageType.HUMAN else "assistant", m.content)
            for m in earlier
            if m.type in {MessageType.HUMAN, MessageType.AI} and m.status == MessageStatus.SUCCESS
        ]
        try:
            prepared.prompt = build_prompt(
                question=question, turns=turns, evidence=groups, budget=model.context_budget
            )
        except ContextOverBudgetError as exc:
            prepared.fault = ModelError(ModelFault.CONTEXT_OVER_BUDGET, str(exc))
    return prepared


def turn_events(prepared: PreparedTurn) -> Generator[Event, None, None]:
    """The answer as it is written (``delta``, ``sentence`` events), then ``done`` with the recorded result."""
    live = SentenceStream(prepared.available, prepared.numbers)
    pieces: list[str] = []
    fault = prepared.fault
    if prepared.model is None:
        answer = ExtractiveComposer().compose(
            question=prepared.question,
            tool_name=prepared.outcome.tool,
            content=prepared.outcome.content,
            artifact=prepared.outcome.artifact,
        )
        pieces.append(answer)
        yield Event("delta", answer)
        for parts in live.feed(answer):
            yield Event("sentence", parts)
    elif fault is None and prepared.server is not None and prepared.prompt is not None:
        try:
            for piece in chat_stream(prepared.server, prepared.prompt.messages):
                pieces.append(piece)
                yield Event("delta", piece)
                for parts in live.feed(piece):
                    yield Event("sentence", parts)
        except ModelError as exc:
            fault = exc
    answer = "".join(pieces)
    if fault is None and not answer.strip():
        fault = ModelError(
            ModelFault.EMPTY_ANSWER, "The answer model sent an empty answer; nothing was stored as one."
        )
    if fault is None:
        for parts in live.finish():
            yield Event("sentence", parts)
    else:
        logger.warning("Answer model %s failed (%s): %s", _composer_name(prepared), fault.code, fault.message)
    yield Event("done", _record(prepared, answer, fault))


def turn_run(prepared: PreparedTurn) -> TurnResult:
    """The whole turn without streaming (the no-JavaScript form and the API)."""
    for event in turn_events(prepared):
        if event.kind == "done":
            result: TurnResult = event.data
            return result
    raise RuntimeError("a turn always ends with its done event")  # pragma: no cover


def _composer_name(prepared: PreparedTurn) -> str:
    return prepared.model.name if prepared.model is not None else EXTRACTIVE


def _record(prepared: PreparedTurn, answer: str, fault: ModelError | None) -> TurnResult:
    model = prepared.model
    meta: dict[str, Any] = {
        "name": _composer_name(prepared),
        "outcome": "answered" if fault is None else fault.code,
    }
    context: dict[str, Any] = {}
    if model is not None:
        meta["model"] = model.model
        if prepared.prompt is not None:
            context = prepared.prompt.metadata(model.context_budget)
            meta["context"] = context
    if fault is not None:
        meta["partial_chars"] = len(answer)
    try:
        with transaction.atomic():
            thread = prepared.thread or thread_create(
                owner=prepared.user, title=_title(prepared.question), agent_name=prepared.agent_name
            )
            message_append(thread=thread, type="human", content=prepared.question)
            retrieval_record(thread=thread, outcome=prepared.outcome)
            message = message_append(
                thread=thread,
                type="ai",
                # The answer exactly as written; a failure is recorded as what it is, never as an answer.
                content=answer if fault is None else fault.message,
                artifact={"composer": meta},
                status=MessageStatus.SUCCESS if fault is None else MessageStatus.ERROR,
            )
    except QuotaExceededError as exc:
        # Admitted under the quota locks at write: past a quota, nothing of the turn is written.
        raise AnswerError(str(exc), kind="quota") from exc
    counts = answer_citations(thread=thread, message=message) if fault is None else _NO_CITATIONS
    return TurnResult(
        thread_id=thread.id,
        message_id=message.id,
        status="answered" if fault is None else "failed",
        composer=meta["name"],
        code=meta["outcome"],
        detail="" if fault is None else fault.message,
        citations=counts,
        context=context,
    )


_NO_CITATIONS = CitationCounts(total=0, resolved=0, unresolved=0, malformed=0, by_reason={})


def answer_citations(*, thread: Thread, message: Message) -> CitationCounts:
    """How many of one answer's citations resolve against the thread's evidence, and why the others do not."""
    # The report stored with the message when it was written (render at write): no parse here.
    for entry in thread_citations(thread=thread):
        if entry.message.id == message.id:
            states = Counter(c.state for c in entry.citations)
            reasons = Counter(
                # A malformed citation's reason says how it is malformed; its code is the state's.
                "malformed" if c.state == "malformed" else REASONS.get(c.reason, "other")
                for c in entry.citations
                if c.state != "resolved"
            )
            return CitationCounts(
                total=len(entry.citations),
                resolved=states["resolved"],
                unresolved=states["unresolved"],
                malformed=states["malformed"],
                by_reason=dict(sorted(reasons.items())),
            )
    return _NO_CITATIONS


def evidence_handles(available: Mapping[str, Evidence]) -> list[str]:
    return list(available)
