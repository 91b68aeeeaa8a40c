"""The one way to ask: question -> search -> answer (extractive, or streamed from an answer model) -> the thread.

Every entry point asks through here: the Ask page (with and without JavaScript),
a thread's follow-up, ``POST /api/threads/{id}/ask`` and the demo. ``turn_prepare``
does everything that may refuse before anything is written: the question, the
per-caller limit on questions (``RATE_LIMIT_ASK``, counted here and only here), the
quotas, the answer model's authorization and configuration, and the search (outside
any transaction, so a slow provider holds no lock). ``turn_events`` then streams the
answer and, once it is complete or has failed, writes the whole turn in one short
transaction: the question, the tool message, and the answer exactly as written, or,
when there is no storable answer, an error message saying why with a stable code.

Whatever the model sends, the turn ends recorded (docs/decisions/0034-a-turn-always-ends-recorded.md): each piece is checked before it is relayed, so an answer past
``MAX_PROSE_CHARS`` or holding a NUL or a lone surrogate stops the call there and is
recorded as ``model_answer_too_long`` or ``model_bad_text``; nothing past the cap and
nothing unstorable is ever streamed. A client that disconnects closes the generator
before the write, which cancels the model call and leaves nothing; once the write has
happened the answer is complete. Never half an answer (docs/decisions/0025-llm-composer.md).
"""

from __future__ import annotations

import logging
from collections.abc import Generator, Iterator

from django.contrib.auth.models import User

from knowledgeweb.answers.errors import AnswerError
from knowledgeweb.answers.extractive import ExtractiveComposer
from knowledgeweb.answers.services import MAX_QUESTION_CHARS, TOOL, question_title
from knowledgeweb.composer.client import ChatServer
from knowledgeweb.composer.errors import ModelError, ModelFault
from knowledgeweb.composer.guard import AnswerGuard
from knowledgeweb.composer.live import SentenceStream
from knowledgeweb.composer.models import AnswerModel
from knowledgeweb.composer.prompt import ContextOverBudgetError, Turn, build_prompt
from knowledgeweb.composer.reader import model_pieces
from knowledgeweb.composer.recording import composer_label, composer_name, turn_record
from knowledgeweb.composer.selectors import answer_model_get, answer_model_key
from knowledgeweb.composer.turn import EXTRACTIVE, Event, PreparedTurn, TurnResult
from knowledgeweb.knowledge import Evidence, read_sources
from knowledgeweb.ops import ratelimit
from knowledgeweb.retrieval import (
    RetrievalError,
    RetrievalInvalidError,
    RetrievalRefusedError,
    retrieval_search,
)
from knowledgeweb.retrieval.service import TOOL_OUTPUT_LIMIT
from knowledgeweb.threads.errors import QuotaExceededError
from knowledgeweb.threads.evidence import messages_sources
from knowledgeweb.threads.models import MessageStatus, MessageType, Thread
from knowledgeweb.threads.quotas import quota_precheck
from knowledgeweb.threads.selectors import thread_messages, thread_source_numbers
from knowledgeweb.threads.text import unstorable_field

logger = logging.getLogger(__name__)


#: The rate limit every question counts against (``RATE_LIMIT_ASK``), per caller.
ASK_LIMIT = "ask"
#: Seconds between heartbeats on a streamed turn (an SSE comment): a WSGI server notices
#: a client that went away only when it writes, so it writes at least this often.
HEARTBEAT_SECONDS = 1.0


def turn_prepare(
    *,
    user: User,
    question: str,
    binding_name: str,
    rate_key: str | None,
    composer: str = EXTRACTIVE,
    thread: Thread | None = None,
    agent_name: str = "",
    title: str = "",
    output_limit: int = TOOL_OUTPUT_LIMIT,
) -> PreparedTurn:
    """Check everything and run the search; raise ``AnswerError`` (nothing written) on any refusal.

    ``rate_key`` names the caller the question counts against (``user:<id>``, ``token:<digest>``);
    past ``RATE_LIMIT_ASK`` this raises ``ratelimit.RateLimited`` before anything runs. Only a
    command run by the operator (the demo) passes ``None``.
    """
    question = question.strip()
    if not question:
        raise AnswerError("Enter a question.", kind="question")
    if len(question) > MAX_QUESTION_CHARS:
        raise AnswerError(f"The question is longer than {MAX_QUESTION_CHARS} characters.", kind="question")
    problem = unstorable_field({"The question": question})
    if problem is not None:
        raise AnswerError(problem, kind="question")
    if rate_key is not None:
        # The one place a question is counted: the Ask page, follow-ups and the API alike.
        ratelimit.consume(ASK_LIMIT, rate_key)
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
            user=user,
            tool=TOOL,
            query=question,
            agent_name=agent_name,
            binding_name=binding_name,
            output_limit=output_limit,
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
        title=title.strip() or question_title(question),
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


def turn_events(
    prepared: PreparedTurn, *, heartbeat: float | None = None, preview: bool = True
) -> Generator[Event, None, None]:
    """The answer's completed sentences as they are written, then ``done`` with the recorded result.

    With ``heartbeat`` (seconds), a ``heartbeat`` event comes at least that often while the
    model writes or is silent. ``preview=False`` skips the sentences (nobody watches). Closing
    the generator before ``done`` cancels the model call and writes nothing.
    """
    live = SentenceStream(prepared.available, prepared.numbers) if preview else None
    guard = AnswerGuard(composer_label(prepared))
    fault = prepared.fault
    pieces: Iterator[str | None]
    if prepared.model is None:
        pieces = iter(
            [
                ExtractiveComposer().compose(
                    question=prepared.question,
                    tool_name=prepared.outcome.tool,
                    content=prepared.outcome.content,
                    artifact=prepared.outcome.artifact,
                )
            ]
        )
    elif fault is None and prepared.server is not None and prepared.prompt is not None:
        pieces = model_pieces(prepared.server, prepared.prompt.messages, tick=heartbeat)
    else:
        pieces = iter(())
    try:
        for piece in pieces:
            if piece is None:
                for parts in live.tick() if live else ():
                    yield Event("sentence", parts)
                yield Event("heartbeat", None)
                continue
            # Checked before it is relayed: nothing past the cap, nothing unstorable is streamed.
            accepted = guard.accept(piece)
            for parts in live.feed(accepted) if live else ():
                yield Event("sentence", parts)
        guard.finish()
    except ModelError as exc:
        fault = exc
    finally:
        # Stops the model call: at the end, at a refused piece, or when the client went away.
        close = getattr(pieces, "close", None)
        if close is not None:
            close()
    answer = guard.answer
    if fault is None and not answer.strip():
        fault = ModelError(
            ModelFault.EMPTY_ANSWER, "The answer model sent an empty answer; nothing was stored as one."
        )
    if fault is None:
        for parts in live.finish() if live else ():
            yield Event("sentence", parts)
    else:
        logger.warning("Answer model %s failed (%s): %s", composer_name(prepared), fault.code, fault.message)
    yield Event("done", turn_record(prepared, answer, fault))


def turn_run(prepared: PreparedTurn) -> TurnResult:
    """The whole turn without streaming (the no-JavaScript forms, the API, the demo)."""
    for event in turn_events(prepared, preview=False):
        if event.kind == "done":
            result: TurnResult = event.data
            return result
    raise RuntimeError("a turn always ends with its done event")  # pragma: no cover


def turn_ask(
    *,
    user: User,
    question: str,
    binding_name: str,
    rate_key: str | None,
    composer: str = EXTRACTIVE,
    thread: Thread | None = None,
    agent_name: str = "",
    title: str = "",
    output_limit: int = TOOL_OUTPUT_LIMIT,
) -> TurnResult:
    """``turn_prepare`` then ``turn_run``: a whole turn, recorded, for callers that do not stream."""
    return turn_run(
        turn_prepare(
            user=user,
            question=question,
            binding_name=binding_name,
            rate_key=rate_key,
            composer=composer,
            thread=thread,
            agent_name=agent_name,
            title=title,
            output_limit=output_limit,
        )
    )
