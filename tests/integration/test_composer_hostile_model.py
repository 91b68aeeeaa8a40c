"""A hostile answer model cannot break a turn (issue 22, defects 1 and 10).

Whatever the model sends (an answer past the cap, a NUL, a lone surrogate, no
sentence end, silence), the turn ends recorded on every entry point: the question,
the search and an error message with a stable code are stored, the stream ends with
``done``, the API answers 200 ``status: failed``, the no-JavaScript form lands on the
thread. Nothing past the answer cap and nothing unstorable is ever relayed.
"""

from __future__ import annotations

import html
import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.answers.errors import AnswerError
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.composer.models import AnswerModel
from knowledgeweb.composer.services import turn_ask
from knowledgeweb.library.services import ChunkDraft, collection_get_or_create, document_ingest
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.services.messages import MAX_PROSE_CHARS
from tests.standins.chat_server import ChatStandin, Reply, serve
from tests.standins.hostile_model import FIRST, hostile

#: What each mode is recorded as, and words its stored message says.
OUTCOMES = {
    "long": ("model_answer_too_long", "answer passed 40,000 characters, the most an answer may hold"),
    "fifty": ("model_answer_too_long", "answer passed 40,000 characters, the most an answer may hold"),
    "nosentence": ("model_answer_too_long", "answer passed 40,000 characters, the most an answer may hold"),
    "nul": ("model_bad_text", "the answer contains a NUL character (U+0000), which cannot be stored."),
    "surrogate": ("model_bad_text", "the answer contains an unpaired surrogate (U+D800)"),
    "stall": ("model_timeout", "sent no complete answer within 1 seconds."),
}


@pytest.fixture
def asker(user: User) -> User:
    binding_create(name="local", provider="local", tools=["knowledge_search"], users=[user])
    collection = collection_get_or_create(name="birds")
    document_ingest(
        collection=collection,
        source_key="k",
        content_hash="k",
        title="Kingfisher note",
        source_url="",
        chunks=[ChunkDraft("Kingfishers dive for fish from a perch. They nest in river banks.")],
    )
    return user


@pytest.fixture
def web(asker: User) -> Client:
    client = Client()
    client.force_login(asker)
    return client


def _model(server: ChatStandin, user: User, **fields: Any) -> AnswerModel:
    model = AnswerModel(name="m", base_url=server.base_url, model="hostile-1", **{"timeout": 1, **fields})
    model.full_clean()
    model.save()
    model.users.add(user)
    return model


def _events(raw: str) -> list[tuple[str, Any]]:
    found = []
    for block in raw.split("\n\n"):
        if not block.strip() or block.startswith(":"):
            continue
        name = block.split("\n")[0].removeprefix("event: ")
        found.append((name, json.loads(block.split("\n", 1)[1].removeprefix("data: "))))
    return found


def _relayed(events: list[tuple[str, Any]]) -> str:
    """Every character of the answer the stream showed."""
    return "".join(
        part.get("text", "") + part.get("label", "")
        for name, data in events
        if name == "sentence"
        for part in data["parts"]
    )


def _assert_recorded(thread: Thread, code: str, said: str) -> Message:
    """The question, the search and the failure are stored; no partial answer is."""
    messages = list(thread.messages.order_by("seq"))
    assert [m.type for m in messages] == ["human", "tool", "ai"]
    answer = messages[-1]
    assert (answer.status, answer.artifact["composer"]["outcome"]) == ("error", code)  # type: ignore[index]
    assert said in answer.content
    assert "Kingfishers dive for fish from a low river perch" not in answer.content
    assert FIRST.strip() not in answer.content
    return answer


@pytest.mark.parametrize("mode", sorted(OUTCOMES))
def test_the_stream_ends_with_done_and_the_turn_is_recorded(web: Client, asker: User, mode: str) -> None:
    code, said = OUTCOMES[mode]
    with serve(hostile(mode)) as server:
        _model(server, asker)
        response: Any = web.post(
            "/ask/stream/", {"question": "kingfishers", "binding": "local", "composer": "m"}
        )
        raw = b"".join(response.streaming_content).decode()

    events = _events(raw)
    assert events[0][0] == "start"
    assert events[-1][0] == "done"
    done = events[-1][1]
    assert (done["status"], done["code"]) == ("failed", code)
    assert said in done["detail"]
    relayed = _relayed(events)
    # Never more than the answer cap, never a character the store refuses.
    assert len(relayed) <= MAX_PROSE_CHARS
    assert len(raw) < 3 * MAX_PROSE_CHARS
    assert "\x00" not in relayed
    assert "\ud800" not in relayed
    assert "\\u0000" not in raw
    assert "\\ud800" not in raw
    if mode in {"nul", "surrogate", "stall"}:
        # Nothing after the bad piece (or the silence) was relayed.
        assert "arrives" not in relayed
        assert "half" not in relayed
        assert "river perch" not in relayed
    answer = _assert_recorded(Thread.objects.get(), code, said)
    assert done["detail"] == answer.content
    assert done["thread_url"] == f"/threads/{answer.thread_id}/"


@pytest.mark.parametrize("mode", sorted(OUTCOMES))
def test_the_api_answers_200_failed_and_records_the_turn(asker: User, api_client: Client, mode: str) -> None:
    code, said = OUTCOMES[mode]
    created = api_client.post("/api/threads", {"title": "Birds"}, content_type="application/json").json()
    with serve(hostile(mode)) as server:
        _model(server, asker)
        response = api_client.post(
            f"/api/threads/{created['id']}/ask",
            {"question": "kingfishers", "binding": "local", "answer_model": "m"},
            content_type="application/json",
        )

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["status"], body["code"]) == ("failed", code)
    assert said in body["detail"]
    answer = _assert_recorded(Thread.objects.get(pk=created["id"]), code, said)
    assert str(answer.id) == body["message_id"]


@pytest.mark.parametrize("mode", sorted(OUTCOMES))
def test_without_javascript_the_form_lands_on_the_thread_that_says_why(
    web: Client, asker: User, mode: str
) -> None:
    code, said = OUTCOMES[mode]
    with serve(hostile(mode)) as server:
        _model(server, asker)
        response = web.post("/ask/", {"question": "kingfishers", "binding": "local", "composer": "m"})

    thread = Thread.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/threads/{thread.id}/"
    _assert_recorded(thread, code, said)
    page = web.get(response["Location"])
    assert page.status_code == 200
    assert said in html.unescape(page.content.decode())


def test_a_follow_up_without_javascript_records_the_failure_in_its_thread(web: Client, asker: User) -> None:
    thread = Thread.objects.create(owner=asker, title="Birds")
    with serve(hostile("nul")) as server:
        _model(server, asker)
        response = web.post(
            f"/threads/{thread.id}/ask/", {"question": "kingfishers", "binding": "local", "composer": "m"}
        )

    assert response.status_code == 302
    _assert_recorded(thread, *OUTCOMES["nul"])


def test_a_surrogate_pair_cut_between_two_pieces_is_stored_as_its_character(web: Client, asker: User) -> None:
    # "\ud83d\ude00" is U+1F600 as JSON writes it; the cut falls between its halves.
    text = "Kingfishers smile \ud83d\ude00 at fish."
    cut = text.index("\ud83d") + 1
    with serve(lambda body: Reply(text=text, piece_chars=cut)) as server:
        _model(server, asker, timeout=5)
        response = web.post("/ask/", {"question": "kingfishers", "binding": "local", "composer": "m"})

    assert response.status_code == 302
    answer = Thread.objects.get().messages.get(type="ai")
    assert (answer.status, answer.content) == ("success", "Kingfishers smile \U0001f600 at fish.")


def test_a_high_surrogate_left_at_the_end_is_bad_text(web: Client, asker: User) -> None:
    with serve(lambda body: Reply(text="Kingfishers dive. \ud83d", piece_chars=4)) as server:
        _model(server, asker, timeout=5)
        web.post("/ask/", {"question": "kingfishers", "binding": "local", "composer": "m"})

    _assert_recorded(Thread.objects.get(), "model_bad_text", "contains an unpaired surrogate (U+D83D)")


def test_an_answer_that_would_pass_the_thread_quota_is_recorded_as_a_failure(
    web: Client, asker: User, settings: Any
) -> None:
    settings.QUOTA_THREAD_BYTES = 12_000
    with serve(lambda body: Reply(text="Kingfishers dive for fish. " * 500, piece_chars=500)) as server:
        _model(server, asker, timeout=5)
        response = web.post("/ask/", {"question": "kingfishers", "binding": "local", "composer": "m"})

    assert response.status_code == 302
    answer = _assert_recorded(
        Thread.objects.get(), "model_answer_over_quota", "The answer (13,500 characters) was not stored"
    )
    assert "12000" in answer.content.replace(",", "")


def test_an_error_message_holding_a_nul_is_stored_readable(web: Client, asker: User) -> None:
    with serve(lambda body: Reply(status=500, error_message="boom \x00 \ud800 done")) as server:
        _model(server, asker, timeout=5)
        web.post("/ask/", {"question": "kingfishers", "binding": "local", "composer": "m"})

    answer = _assert_recorded(
        Thread.objects.get(), "model_server_error", "failed with HTTP 500: boom \ufffd \ufffd done"
    )
    assert "\x00" not in answer.content


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("kingfishers \x00", "The question contains a NUL character (U+0000), which cannot be stored."),
        ("kingfishers \ud800", "The question contains an unpaired surrogate (U+D800)"),
    ],
)
def test_a_question_the_store_would_refuse_is_refused_before_the_search(
    asker: User, question: str, said: str
) -> None:
    with serve(hostile("nul")) as server:
        _model(server, asker)
        with pytest.raises(AnswerError) as caught:
            turn_ask(user=asker, question=question, binding_name="local", rate_key=None, composer="m")

    assert caught.value.kind == "question"
    assert said in caught.value.message
    assert server.requests == []
    assert Thread.objects.count() == 0
