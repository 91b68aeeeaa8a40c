"""Whole turns against a real local chat-completions server: Ask, streaming, follow-ups, faults."""

from __future__ import annotations

import html
import json
import logging
import re
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.test import Client

from knowledgeweb.composer.models import AnswerModel
from knowledgeweb.retrieval import retrieval_search
from knowledgeweb.threads.models import Message, Thread
from tests.factories import BindingFactory, CollectionFactory
from tests.standins.chat_server import ChatStandin, Reply, citing_model, serve, sources_in

KEY_ENV = "KNOWLEDGEWEB_KEY_TESTMODEL"
KEY = "sk-live-DO-NOT-LEAK-4c3b2a19"


@pytest.fixture
def corpus(user: User) -> User:
    return _corpus(user)


def _corpus(user: User) -> User:
    BindingFactory.create(name="local", users=[user])
    documents: dict[str, str] = {}
    for number in range(3):
        documents[f"Kingfisher note {number}"] = (
            f"Kingfishers dive for fish from a perch, note {number}. They nest in river banks."
        )
        documents[f"Heron note {number}"] = (
            f"Herons wade in shallow water to hunt, note {number}. They stand very still."
        )
    CollectionFactory.create(name="birds", documents=documents)
    return user


def _model(server: ChatStandin, user: User, **fields: Any) -> AnswerModel:
    model = AnswerModel(name="m", base_url=server.base_url, model="standin-1", **{"timeout": 5, **fields})
    model.full_clean()
    model.save()
    model.users.add(user)
    return model


@pytest.fixture
def web(corpus: User) -> Client:
    client = Client()
    client.force_login(corpus)
    return client


def _events(response: Any) -> list[tuple[str, Any]]:
    raw = b"".join(response.streaming_content).decode()
    return _parse(raw)


def _parse(raw: str) -> list[tuple[str, Any]]:
    found = []
    for block in raw.split("\n\n"):
        if not block.strip() or block.startswith(":"):
            continue  # a heartbeat (an SSE comment) carries no event
        name = block.split("\n")[0].removeprefix("event: ")
        data = json.loads(block.split("\n", 1)[1].removeprefix("data: "))
        found.append((name, data))
    return found


def _composer(message: Message) -> dict[str, Any]:
    assert isinstance(message.artifact, dict)
    meta: dict[str, Any] = message.artifact["composer"]
    return meta


def _ai(thread: Thread) -> list[Message]:
    return list(thread.messages.filter(type="ai").order_by("seq"))


# --- Ask ------------------------------------------------------------------------------------


def test_a_model_that_cites_correctly_streams_and_every_citation_resolves(web: Client, corpus: User) -> None:
    with serve(citing_model) as server:
        _model(server, corpus)
        response = web.post("/ask/stream/", {"question": "kingfishers", "binding": "local", "composer": "m"})
        assert response.status_code == 200
        assert response["Content-Type"].startswith("text/event-stream")
        events = _events(response)

    names = [name for name, _ in events]
    assert names[-1] == "done"
    assert "sentence" in names
    done = events[-1][1]
    assert done["status"] == "answered"
    assert done["citations"]["total"] == done["citations"]["resolved"] == 3
    assert done["citations"]["by_reason"] == {}
    cites = [p for name, d in events if name == "sentence" for p in d["parts"] if "cite" in p]
    assert [c["cite"] for c in cites] == ["resolved"] * 3
    thread = Thread.objects.get()
    assert done["thread_url"] == f"/threads/{thread.id}/"
    assert [m.type for m in thread.messages.order_by("seq")] == ["human", "tool", "ai"]
    (answer,) = _ai(thread)
    (body,) = server.requests
    # Stored exactly as the model wrote it.
    assert answer.content == citing_model(body).text
    assert _composer(answer)["outcome"] == "answered"
    assert _composer(answer)["context"]["sources_sent"] == 3
    # The model was sent the question and the evidence with handles.
    assert body["messages"][-1] == {"role": "user", "content": "kingfishers"}
    assert len(sources_in(body)) == 3


def test_without_javascript_the_form_posts_and_redirects_to_the_finished_thread(
    web: Client, corpus: User
) -> None:
    with serve(citing_model) as server:
        _model(server, corpus)
        response = web.post("/ask/", {"question": "kingfishers", "binding": "local", "composer": "m"})

    thread = Thread.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/threads/{thread.id}/"
    page = web.get(response["Location"]).content.decode()
    assert 'data-citation="resolved"' in page
    assert 'data-form="follow-up"' in page


def test_a_model_that_invents_handles_is_stored_as_written_and_reported_unresolved(
    web: Client, corpus: User
) -> None:
    invented = "knowledge-source-" + "ab" * 16
    text = f"Kingfishers hover [citation:1](#{invented}). They also sing [citation:2](#knowledge-source-zz)."
    with serve(lambda body: Reply(text=text)) as server:
        _model(server, corpus)
        events = _events(
            web.post("/ask/stream/", {"question": "kingfishers", "binding": "local", "composer": "m"})
        )

    done = events[-1][1]
    assert done["citations"] == {
        "total": 2,
        "resolved": 0,
        "unresolved": 1,
        "malformed": 1,
        "by_reason": {"malformed": 1, "no_such_evidence": 1},
    }
    (answer,) = _ai(Thread.objects.get())
    assert answer.content == text  # nothing silently rewritten
    page = web.get(done["thread_url"]).content.decode()
    assert f'href="#{invented}"' not in page


def test_a_stalled_stream_records_a_timeout_and_no_partial_answer(web: Client, corpus: User) -> None:
    with serve(lambda body: Reply(text="Kingfishers dive for fish. " * 5, stall_after=4)) as server:
        _model(server, corpus, timeout=1)
        events = _events(
            web.post("/ask/stream/", {"question": "kingfishers", "binding": "local", "composer": "m"})
        )

    done = events[-1][1]
    assert (done["status"], done["code"]) == ("failed", "model_timeout")
    assert done["detail"] == "Answer model 'm' sent no complete answer within 1 seconds."
    thread = Thread.objects.get()
    (message,) = _ai(thread)
    assert message.status == "error"
    assert message.content == done["detail"]
    assert "Kingfishers dive" not in message.content
    assert _composer(message)["partial_chars"] > 0
    # The question and the search are kept: the follow-up can be asked again.
    assert [m.type for m in thread.messages.order_by("seq")] == ["human", "tool", "ai"]


def test_a_client_that_disconnects_mid_stream_leaves_nothing(
    live_server: Any, django_user_model: Any
) -> None:
    """Over real HTTP: the browser goes away after the first answer events; nothing is written."""
    user = django_user_model.objects.create_user("walker", password="walker-password-1")
    _corpus(user)
    login = Client()
    login.force_login(user)
    cookies = {"sessionid": login.cookies["sessionid"].value}
    long_answer = "Kingfishers dive for fish. " * 200
    with serve(lambda body: Reply(text=long_answer, piece_delay=0.01)) as server:
        _model(server, user)
        # Cookies are Secure off DEBUG, and this server is plain HTTP: send them by hand, as a
        # browser would over HTTPS.
        csrf = httpx.get(live_server.url + "/ask/", cookies=cookies).cookies["csrftoken"]
        headers = {"Cookie": f"sessionid={cookies['sessionid']}; csrftoken={csrf}"}
        with httpx.Client(base_url=live_server.url, headers=headers, timeout=10) as browser:
            form = {
                "question": "kingfishers",
                "binding": "local",
                "composer": "m",
                "csrfmiddlewaretoken": csrf,
            }
            with browser.stream("POST", "/ask/stream/", data=form) as response:
                seen = []
                for line in response.iter_lines():
                    seen.append(line)
                    if line == "event: sentence":
                        break
            # Leaving the block closed the connection mid-answer (about 800 pieces were still to come).
        # The app notices at its next write, closes the turn, and with it the model call.
        assert server.client_gone.wait(10)

    assert seen[0] == "event: start"
    assert Thread.objects.count() == 0
    assert Message.objects.count() == 0


@pytest.mark.parametrize(
    ("reply", "code", "said"),
    [
        (
            Reply(text="   "),
            "model_empty_answer",
            "The answer model sent an empty answer; nothing was stored as one.",
        ),
        (
            Reply(status=429, error_message="slow down"),
            "model_rate_limited",
            "Answer model 'm' is rate limiting requests (HTTP 429): slow down Try again later.",
        ),
        (
            Reply(status=404, error_message="model 'standin-1' not found"),
            "model_not_found",
            "Answer model 'm' answered HTTP 404: model 'standin-1' not found Check the base URL",
        ),
        (
            Reply(status=403, error_message="forbidden"),
            "model_auth",
            "Answer model 'm' refused the credential (HTTP 403): forbidden Check the key variable.",
        ),
        (
            Reply(status=502, error_message="upstream"),
            "model_server_error",
            "Answer model 'm' failed with HTTP 502: upstream",
        ),
        (
            Reply(text="Half an answer. More", truncate_after=3),
            "model_stream_truncated",
            "Answer model 'm''s stream ended before the answer was finished; the partial answer was not stored.",
        ),
        (
            Reply(text="Half an answer. More", malformed_after=2),
            "model_bad_response",
            "Answer model 'm' sent a stream event that is not JSON.",
        ),
        (
            Reply(text="Half an answer. More", finish_reason="length"),
            "model_length_limit",
            "Answer model 'm' stopped at its output-token limit; the cut answer was not stored.",
        ),
    ],
)
def test_faults_are_recorded_outcomes(web: Client, corpus: User, reply: Reply, code: str, said: str) -> None:
    with serve(lambda body: reply) as server:
        _model(server, corpus)
        response = web.post("/ask/", {"question": "kingfishers", "binding": "local", "composer": "m"})

    thread = Thread.objects.get()
    assert response["Location"] == f"/threads/{thread.id}/"
    (message,) = _ai(thread)
    assert (message.status, _composer(message)["outcome"]) == ("error", code)
    assert message.content.startswith(said)
    assert "Half an answer" not in message.content
    page = web.get(response["Location"]).content.decode()
    assert said.split(":")[0] in html.unescape(page)


@pytest.mark.parametrize(
    ("form", "status", "said"),
    [
        ({"question": "", "binding": "local", "composer": "m"}, 422, "Enter a question."),
        ({"question": "q" * 2001, "binding": "local", "composer": "m"}, 422, "at most 2000 characters"),
        (
            {"question": "kingfishers", "binding": "nope", "composer": "m"},
            403,
            "No binding named 'nope' is available to you.",
        ),
        (
            {"question": "kingfishers", "binding": "local", "composer": "nope"},
            403,
            "No answer model named 'nope' is available to you.",
        ),
    ],
)
def test_refusals_before_the_stream_say_why_and_write_nothing(
    web: Client, corpus: User, form: dict[str, str], status: int, said: str
) -> None:
    with serve(citing_model) as server:
        _model(server, corpus)
        response = web.post("/ask/stream/", form)

    assert response.status_code == status
    assert said in response.json()["error"]
    # The API's code for the same refusal (knowledgeweb.errors): 422 a question, 403 a binding or model.
    assert response.json()["code"] == {422: "ask_question", 403: "ask_binding"}[status]
    assert server.requests == []
    assert Thread.objects.count() == 0
    assert Message.objects.count() == 0


def test_context_over_budget_sends_nothing_and_says_why(web: Client, corpus: User) -> None:
    with serve(citing_model) as server:
        _model(server, corpus, context_budget=500)
        CollectionFactory.create(
            name="birds", documents={"Long": "Grebes dive and swim and dive again. " * 30}
        )
        events = _events(
            web.post("/ask/stream/", {"question": "grebes", "binding": "local", "composer": "m"})
        )

    done = events[-1][1]
    assert (done["status"], done["code"]) == ("failed", "context_over_budget")
    assert "context budget of 500 characters" in done["detail"]
    assert server.requests == []


# --- follow-ups -----------------------------------------------------------------------------


def test_a_follow_up_cites_earlier_evidence_and_a_citation_to_later_evidence_stays_unresolved(
    corpus: User, api_client: Client
) -> None:
    heron = retrieval_search(user=corpus, tool="knowledge_search", query="herons", binding_name="local")
    heron_handle = "knowledge-source-" + heron.artifact["knowledge_sources"][0]["id"]  # type: ignore[index]
    turns: list[dict[str, Any]] = []

    def model(body: dict[str, Any]) -> Reply:
        turns.append(body)
        handles = [handle for _, handle in sources_in(body)]
        if len(turns) == 1:  # cites a heron source it was never given (it appears only in turn 2)
            return Reply(
                text=f"Kingfishers dive [citation:1](#{handles[0]}). Herons wade [citation:9](#{heron_handle})."
            )
        kingfisher = next(h for h in handles if h != heron_handle and h in turns[0]["messages"][0]["content"])
        return Reply(
            text=f"Herons wade [citation:1](#{heron_handle}). Unlike kingfishers [citation:2](#{kingfisher})."
        )

    with serve(model) as server:
        _model(server, corpus)
        created = api_client.post("/api/threads", {"title": "Birds"}, content_type="application/json").json()
        first = api_client.post(
            f"/api/threads/{created['id']}/ask",
            {"question": "kingfishers", "binding": "local", "answer_model": "m"},
            content_type="application/json",
        )
        second = api_client.post(
            f"/api/threads/{created['id']}/ask",
            {"question": "and herons?", "binding": "local", "answer_model": "m"},
            content_type="application/json",
        )

    assert first.status_code == second.status_code == 200
    assert first.json()["citations"]["by_reason"] == {"no_such_evidence": 1}
    assert second.json()["citations"] == {
        "total": 2,
        "resolved": 2,
        "unresolved": 0,
        "malformed": 0,
        "by_reason": {},
    }
    # The second request carried the conversation so far and both turns' evidence.
    roles = [m["role"] for m in turns[1]["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert turns[1]["messages"][2]["content"].startswith("Kingfishers dive")
    thread = Thread.objects.get(pk=created["id"])
    assert [m.type for m in thread.messages.order_by("seq")] == ["human", "tool", "ai", "human", "tool", "ai"]
    report = api_client.get(f"/api/threads/{thread.id}/citations").json()
    first_answer, second_answer = report["messages"]
    assert [(c["state"], c["href"]) for c in first_answer["citations"]] == [
        ("resolved", first_answer["citations"][0]["href"]),
        ("unresolved", f"#{heron_handle}"),
    ]
    # Turn 1's citation of the heron source stays unresolved although turn 2 retrieved it.
    assert "appears only in a later tool message" in first_answer["citations"][1]["reason"]
    assert [c["state"] for c in second_answer["citations"]] == ["resolved", "resolved"]


def test_a_follow_up_in_another_users_thread_is_not_found_and_writes_nothing(
    corpus: User, other_user: User, api_client: Client
) -> None:
    from knowledgeweb.threads.services import thread_create

    theirs = thread_create(owner=other_user, title="Theirs")
    response = api_client.post(
        f"/api/threads/{theirs.id}/ask",
        {"question": "kingfishers", "binding": "local"},
        content_type="application/json",
    )

    assert response.status_code == 404
    assert Message.objects.count() == 0


def test_the_extractive_default_needs_no_model_in_a_follow_up(
    corpus: User, web: Client, api_client: Client
) -> None:
    created = api_client.post("/api/threads", {"title": "Birds"}, content_type="application/json").json()

    response = web.post(f"/threads/{created['id']}/ask/", {"question": "herons", "binding": "local"})

    assert response.status_code == 302
    (answer,) = _ai(Thread.objects.get(pk=created["id"]))
    assert _composer(answer)["name"] == "extractive"
    assert "Herons wade" in answer.content


# --- who may use a model; keys --------------------------------------------------------------


def test_a_model_with_no_users_serves_nobody_and_nothing_is_written(corpus: User, api_client: Client) -> None:
    with serve(citing_model) as server:
        model = _model(server, corpus)
        model.users.clear()
        created = api_client.post("/api/threads", {"title": "Birds"}, content_type="application/json").json()
        response = api_client.post(
            f"/api/threads/{created['id']}/ask",
            {"question": "kingfishers", "binding": "local", "answer_model": "m"},
            content_type="application/json",
        )

    assert response.status_code == 403
    assert response.json() == {
        "detail": "No answer model named 'm' is available to you.",
        "code": "ask_binding",
    }
    assert Message.objects.count() == 0
    assert server.requests == []


def test_a_model_limited_to_named_agents_serves_only_them(corpus: User, api_client: Client) -> None:
    with serve(citing_model) as server:
        _model(server, corpus, agent_names=["researcher"])
        created = api_client.post("/api/threads", {"title": "Birds"}, content_type="application/json").json()
        refused = api_client.post(
            f"/api/threads/{created['id']}/ask",
            {"question": "kingfishers", "binding": "local", "answer_model": "m"},
            content_type="application/json",
        )
        allowed = api_client.post(
            f"/api/threads/{created['id']}/ask",
            {"question": "kingfishers", "binding": "local", "answer_model": "m", "agent_name": "researcher"},
            content_type="application/json",
        )

    assert refused.status_code == 403
    assert allowed.status_code == 200
    assert allowed.json()["status"] == "answered"


@pytest.mark.parametrize("name", ["SECRET_KEY", "DATABASE_URL", "KNOWLEDGEWEB_KEY_", "sk-abc def"])
def test_a_key_variable_outside_the_prefix_is_refused(name: str, db: None) -> None:
    model = AnswerModel(name="m", base_url="http://127.0.0.1:1/v1", model="x", api_key_env=name)

    with pytest.raises(ValidationError) as caught:
        model.full_clean()

    assert "api_key_env" in caught.value.message_dict
    assert AnswerModel.objects.count() == 0


def test_a_model_edited_in_the_database_to_read_secret_key_is_refused_at_use(
    corpus: User, web: Client
) -> None:
    with serve(citing_model) as server:
        model = _model(server, corpus)
        AnswerModel.objects.filter(pk=model.pk).update(api_key_env="SECRET_KEY")
        response = web.post("/ask/stream/", {"question": "kingfishers", "binding": "local", "composer": "m"})

    assert response.status_code == 403
    assert "KNOWLEDGEWEB_KEY_" in response.json()["error"]
    assert server.requests == []
    assert Thread.objects.count() == 0


def test_the_key_never_appears_in_messages_pages_or_logs(
    corpus: User, web: Client, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv(KEY_ENV, KEY)
    with serve(lambda body: Reply(status=401, error_message=f"key {KEY} is revoked"), api_key=None) as server:
        _model(server, corpus, api_key_env=KEY_ENV)
        events = _events(
            web.post("/ask/stream/", {"question": "kingfishers", "binding": "local", "composer": "m"})
        )

    assert server.authorizations == [f"Bearer {KEY}"]
    done = events[-1][1]
    assert done["code"] == "model_auth"
    page = web.get(done["thread_url"]).content.decode()
    stored = json.dumps([(m.content, m.artifact) for m in Message.objects.all()])
    for place in (json.dumps(events), page, stored, caplog.text):
        assert KEY not in place
    assert "[redacted]" in done["detail"]


def test_an_unset_key_variable_is_refused_before_any_request(corpus: User, web: Client) -> None:
    with serve(citing_model) as server:
        _model(server, corpus, api_key_env="KNOWLEDGEWEB_KEY_UNSET_FOR_TEST")
        response = web.post("/ask/stream/", {"question": "kingfishers", "binding": "local", "composer": "m"})

    assert response.status_code == 403
    assert "KNOWLEDGEWEB_KEY_UNSET_FOR_TEST" in response.json()["error"]
    assert server.requests == []
    assert Thread.objects.count() == 0


# --- quotas (the threads quota module, through message_append) ------------------------------


def test_a_follow_up_in_a_full_thread_is_refused_before_the_search_and_writes_nothing(
    corpus: User, api_client: Client, settings: Any
) -> None:
    created = api_client.post("/api/threads", {"title": "Birds"}, content_type="application/json").json()
    for text in ("one", "two"):
        api_client.post(
            f"/api/threads/{created['id']}/messages",
            {"type": "human", "content": text},
            content_type="application/json",
        )
    settings.QUOTA_THREAD_MESSAGES = 2
    with serve(citing_model) as server:
        _model(server, corpus)
        response = api_client.post(
            f"/api/threads/{created['id']}/ask",
            {"question": "kingfishers", "binding": "local", "answer_model": "m"},
            content_type="application/json",
        )

    assert response.status_code == 413
    assert response.json()["code"] == "ask_quota"
    assert "limit" in response.json()["detail"]
    assert server.requests == []
    assert Message.objects.count() == 2


def test_a_turn_that_would_pass_the_quota_at_write_writes_nothing(
    corpus: User, web: Client, settings: Any
) -> None:
    # One human + tool + ai turn is 3 messages; the precheck passes for 2 (room for one) and the write refuses.
    from knowledgeweb.threads.services import thread_create

    thread = thread_create(owner=corpus, title="Birds")
    settings.QUOTA_THREAD_MESSAGES = 2
    with serve(citing_model) as server:
        _model(server, corpus)
        events = _events(
            web.post(
                f"/threads/{thread.id}/ask/stream/",
                {"question": "kingfishers", "binding": "local", "composer": "m"},
            )
        )

    assert events[-1][0] == "error"
    assert events[-1][1]["kind"] == "quota"
    assert Message.objects.count() == 0


def test_a_timeout_over_the_ceiling_is_refused(db: None, settings: Any) -> None:
    settings.KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING = 20
    model = AnswerModel(name="m", base_url="http://127.0.0.1:1/v1", model="x", timeout=21)

    with pytest.raises(ValidationError) as caught:
        model.full_clean()

    assert caught.value.message_dict["timeout"] == [
        "Enter a whole number from 1 to 20 seconds: the timeout bounds the whole answer, and "
        "KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING allows at most 20."
    ]


# --- serving: rate limits and compression --------------------------------------------------


def test_questions_past_the_ask_rate_limit_are_refused_and_write_nothing(
    corpus: User, web: Client, api_client: Client, settings: Any
) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "ask": (1, 60)}
    created = api_client.post("/api/threads", {"title": "Birds"}, content_type="application/json").json()
    with serve(citing_model) as server:
        _model(server, corpus)
        first = web.post("/ask/stream/", {"question": "kingfishers", "binding": "local", "composer": "m"})
        _events(first)
        second = web.post("/ask/stream/", {"question": "herons", "binding": "local", "composer": "m"})
        follow_up = web.post(f"/threads/{created['id']}/ask/", {"question": "herons", "binding": "local"})
        api = api_client.post(
            f"/api/threads/{created['id']}/ask",
            {"question": "herons", "binding": "local"},
            content_type="application/json",
        )
        api_again = api_client.post(
            f"/api/threads/{created['id']}/ask",
            {"question": "herons", "binding": "local"},
            content_type="application/json",
        )

    assert second.status_code == 429
    assert second.json()["error"].startswith("Too many questions: try again in")
    assert int(second["Retry-After"]) >= 1
    assert follow_up.status_code == 429
    assert "Too many questions" in html.unescape(follow_up.content.decode())
    # The API counts per token: its first question passes, its second does not.
    assert api.status_code == 200
    assert api_again.status_code == 429
    assert len(server.requests) == 1
    assert Thread.objects.count() == 2  # the first streamed turn's thread and the API's
    assert Message.objects.filter(thread_id=created["id"]).count() == 3


def test_the_event_stream_is_never_gzipped(web: Client, corpus: User) -> None:
    with serve(citing_model) as server:
        _model(server, corpus)
        response = web.post(
            "/ask/stream/",
            {"question": "kingfishers", "binding": "local", "composer": "m"},
            HTTP_ACCEPT_ENCODING="gzip, deflate, br",
        )
        events = _events(response)

    assert not response.has_header("Content-Encoding")
    assert events[-1][0] == "done"


def test_a_streamed_follow_up_numbers_sources_as_the_thread_page_does(web: Client, corpus: User) -> None:
    heron = retrieval_search(user=corpus, tool="knowledge_search", query="herons", binding_name="local")
    heron_handle = "knowledge-source-" + heron.artifact["knowledge_sources"][0]["id"]  # type: ignore[index]
    first_cited: list[str] = []

    def model(body: dict[str, Any]) -> Reply:
        if not first_cited:
            first_cited.append(sources_in(body)[0][1])
            return Reply(text=f"Kingfishers dive [citation:1](#{first_cited[0]}).")
        # The follow-up cites a source new to the thread first, then the one it already numbers.
        return Reply(
            text=f"Herons wade [citation:1](#{heron_handle}). Kingfishers dive [citation:2](#{first_cited[0]})."
        )

    with serve(model) as server:
        _model(server, corpus)
        _events(web.post("/ask/stream/", {"question": "kingfishers", "binding": "local", "composer": "m"}))
        thread = Thread.objects.get()
        follow_up = {"question": "herons", "binding": "local", "composer": "m"}
        events = _events(web.post(f"/threads/{thread.id}/ask/stream/", follow_up))
    cites = [p for name, d in events if name == "sentence" for p in d["parts"] if "cite" in p]
    assert [(c["handle"], c["number"]) for c in cites] == [(heron_handle, 2), (first_cited[0], 1)]
    # The page, once the answer is stored, shows the same numbers.
    page = web.get(f"/threads/{thread.id}/").content.decode()
    numbers = re.findall(r'href="#([^"]+)" id="cite-[^"]+"[^>]*><span class="citation-number">\[(\d)\]', page)
    assert numbers == [(first_cited[0], "1"), (heron_handle, "2"), (first_cited[0], "1")]
