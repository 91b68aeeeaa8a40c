"""``chat_stream`` against a real local HTTP server speaking OpenAI's chat-completions wire format."""

from __future__ import annotations

import logging
from time import monotonic

import pytest

from knowledgeweb.composer.client import ChatServer, chat_stream
from knowledgeweb.composer.errors import ModelError, ModelFault
from tests.standins.chat_server import Reply, serve

KEY = "sk-test-SECRET-9f8e7d6c5b4a"
MESSAGES = [{"role": "user", "content": "Say something."}]
TEXT = "Kingfishers dive for fish. They nest in banks."


def _server(base_url: str, *, key: str = KEY, timeout: float = 5.0) -> ChatServer:
    return ChatServer(label="Answer model 'm'", base_url=base_url, model="m", timeout=timeout, api_key=key)


def _fault(base_url: str, **kwargs: object) -> ModelError:
    with pytest.raises(ModelError) as caught:
        list(chat_stream(_server(base_url, **kwargs), MESSAGES))  # type: ignore[arg-type]
    return caught.value


def test_a_streamed_answer_arrives_in_pieces_with_the_request_openai_documents() -> None:
    with serve(lambda body: Reply(text=TEXT), api_key=KEY) as server:
        got = list(chat_stream(_server(server.base_url), MESSAGES))

    assert "".join(got) == TEXT
    assert len(got) > 3
    (body,) = server.requests
    assert body["stream"] is True
    assert body["model"] == "m"
    assert body["messages"] == MESSAGES
    assert server.authorizations == [f"Bearer {KEY}"]


def test_a_server_that_ignores_stream_and_answers_json_is_read() -> None:
    with serve(lambda body: Reply(text=TEXT, json_body=True), api_key=KEY) as server:
        assert list(chat_stream(_server(server.base_url), MESSAGES)) == [TEXT]


def test_no_key_sends_no_authorization_header() -> None:
    with serve(lambda body: Reply(text=TEXT)) as server:
        list(chat_stream(_server(server.base_url, key=""), MESSAGES))

    assert server.authorizations == [None]


@pytest.mark.parametrize(
    ("status", "code", "words"),
    [
        (401, ModelFault.AUTH, "refused the credential (HTTP 401)"),
        (403, ModelFault.AUTH, "refused the credential (HTTP 403)"),
        (404, ModelFault.NOT_FOUND, "HTTP 404"),
        (429, ModelFault.RATE_LIMITED, "rate limiting requests (HTTP 429)"),
        (500, ModelFault.SERVER_ERROR, "failed with HTTP 500"),
        (503, ModelFault.SERVER_ERROR, "failed with HTTP 503"),
        (400, ModelFault.REJECTED, "rejected the request (HTTP 400)"),
    ],
)
def test_http_errors_have_their_own_codes_and_never_show_the_key(
    status: int, code: ModelFault, words: str, caplog: pytest.LogCaptureFixture
) -> None:
    # The server echoes the key in its message, as a careless proxy might.
    with serve(lambda body: Reply(status=status, error_message=f"bad: Bearer {KEY} / {KEY}")) as server:
        fault = _fault(server.base_url)

    assert fault.code == code
    assert words in fault.message
    assert KEY not in fault.message
    assert KEY not in caplog.text


def test_a_wrong_key_is_an_auth_fault_without_the_key() -> None:
    with serve(api_key="the-right-key") as server:
        fault = _fault(server.base_url)

    assert fault.code == ModelFault.AUTH
    assert "Incorrect API key provided" in fault.message
    assert KEY not in fault.message


def test_a_redirect_is_refused_and_never_followed() -> None:
    with (
        serve(lambda body: Reply(text=TEXT)) as target,
        serve(lambda body: Reply(status=307, location=target.base_url + "/chat/completions")) as server,
    ):
        fault = _fault(server.base_url)

    assert fault.code == ModelFault.REDIRECT_REFUSED
    assert target.requests == []


def test_a_stream_that_stalls_mid_answer_ends_at_the_timeout(caplog: pytest.LogCaptureFixture) -> None:
    with serve(lambda body: Reply(text=TEXT, stall_after=3)) as server:
        started = monotonic()
        fault = _fault(server.base_url, timeout=1.0)
        elapsed = monotonic() - started

    assert fault.code == ModelFault.TIMEOUT
    assert fault.message == "Answer model 'm' sent no complete answer within 1 seconds."
    assert elapsed < 5  # bounded by the timeout, not by the stalled server (which waits 30 s)


def test_a_stream_that_ends_without_finishing_is_truncated() -> None:
    with serve(lambda body: Reply(text=TEXT, truncate_after=4)) as server:
        fault = _fault(server.base_url)

    assert fault.code == ModelFault.STREAM_TRUNCATED
    assert "partial answer was not stored" in fault.message


def test_a_malformed_event_is_a_bad_response() -> None:
    with serve(lambda body: Reply(text=TEXT, malformed_after=2)) as server:
        fault = _fault(server.base_url)

    assert fault.code == ModelFault.BAD_RESPONSE
    assert "not JSON" in fault.message


def test_an_answer_cut_at_the_token_limit_is_not_a_whole_answer() -> None:
    with serve(lambda body: Reply(text=TEXT, finish_reason="length")) as server:
        fault = _fault(server.base_url)

    assert fault.code == ModelFault.LENGTH_LIMIT


def test_a_compressed_stream_is_refused_unread() -> None:
    with serve(lambda body: Reply(text=TEXT, headers={"Content-Encoding": "gzip"})) as server:
        fault = _fault(server.base_url)

    assert fault.code == ModelFault.BAD_RESPONSE
    assert "'gzip'-encoded" in fault.message


def test_an_unreachable_server_is_said_so() -> None:
    with serve() as server:
        base_url = server.base_url
    fault = _fault(base_url)

    assert fault.code == ModelFault.UNREACHABLE


def test_the_key_never_appears_in_logs_or_repr(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with serve(lambda body: Reply(text=TEXT), api_key=KEY) as server:
        config = _server(server.base_url)
        list(chat_stream(config, MESSAGES))

    assert KEY not in repr(config)
    assert KEY not in caplog.text


def test_a_stream_that_trickles_forever_ends_at_one_deadline_for_the_whole_answer() -> None:
    # Every piece arrives well within the timeout, so a per-read timeout alone would never fire.
    with serve(lambda body: Reply(text="word " * 200, piece_delay=0.25)) as server:
        started = monotonic()
        fault = _fault(server.base_url, timeout=1.0)
        elapsed = monotonic() - started

    assert fault.code == ModelFault.TIMEOUT
    assert elapsed < 3
