"""Streaming ``POST {base}/chat/completions`` through the project's safe client.

The wire format is OpenAI's: with ``stream: true`` the answer arrives as server-sent
events, each ``data:`` line a ``chat.completion.chunk`` whose ``choices[0].delta.content``
carries the next piece, ending with ``data: [DONE]``. A server that ignores
``stream`` and answers one ``chat.completion`` JSON body is read as well.

What the safe client gives every provider call holds here: redirects are never
followed, the body is capped at ``MAX_BODY_BYTES``, we ask for an uncompressed
body, no proxy or .netrc from the environment, and one monotonic deadline bounds
the whole answer (connect, headers, every chunk). The key travels only in the
``Authorization`` header and is redacted from every message.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from time import monotonic
from typing import Any

import httpx

from knowledgeweb.composer.errors import ModelError, ModelFault
from knowledgeweb.providers.client import MAX_BODY_BYTES, build_client, detail_of
from knowledgeweb.providers.deadline import Deadline
from knowledgeweb.providers.redaction import Redactor

_ERROR_BODY_BYTES = 64 * 1024


@dataclass(frozen=True)
class ChatServer:
    """Where and how to ask. ``repr`` never shows the key."""

    label: str
    base_url: str
    model: str
    timeout: float
    temperature: float = 0.2
    max_output_tokens: int = 1024
    api_key: str = field(default="", repr=False)

    @property
    def redactor(self) -> Redactor:
        return Redactor([self.api_key] if self.api_key else [])


def chat_stream(
    server: ChatServer, messages: list[dict[str, str]], *, deadline: Deadline | None = None
) -> Generator[str, None, None]:
    """Yield the answer's text pieces as they arrive; raise ``ModelError`` for anything but a whole answer.

    A whole answer is one that ended with ``finish_reason: "stop"`` (or ``[DONE]``
    after content): a stream that stops early, a malformed chunk or an answer cut at
    the output-token limit raises, so a caller never stores half an answer as complete.
    """
    redactor = server.redactor
    label = server.label
    # One deadline for the whole answer: the transport gives every network operation only
    # what is left of it (a stalled or trickling stream ends at the deadline, not later),
    # and the loops below check it between events.
    # ``deadline`` may be given so that another thread can cancel the call (Deadline.cancel).
    watchdog = deadline or Deadline(server.timeout)
    expires = monotonic() + watchdog.remaining()

    def fail(code: ModelFault, message: str) -> ModelError:
        return ModelError(code, redactor.message(message))

    headers = {"Accept": "text/event-stream", "Accept-Encoding": "identity"}
    if server.api_key:
        headers["Authorization"] = f"Bearer {server.api_key}"
    body = {
        "model": server.model,
        "messages": messages,
        "stream": True,
        "temperature": server.temperature,
        "max_tokens": server.max_output_tokens,
    }
    url = server.base_url.rstrip("/") + "/chat/completions"
    timed_out = f"{label} sent no complete answer within {server.timeout:g} seconds."
    try:
        with (
            build_client(timeout=server.timeout, deadline=watchdog) as client,
            client.stream("POST", url, json=body, headers=headers) as response,
        ):
            _check_status(response, label, fail, expires)
            encoding = response.headers.get("content-encoding", "").strip().lower()
            if encoding not in {"", "identity"}:
                raise fail(
                    ModelFault.BAD_RESPONSE,
                    f"{label} answered with a {encoding!r}-encoded body; it was not read.",
                )
            kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if kind == "application/json":
                yield _whole_answer(response, label, fail, expires)
                return
            yield from _events(response, label, fail, expires, timed_out)
    except httpx.TimeoutException:
        raise fail(ModelFault.TIMEOUT, timed_out) from None
    except httpx.TransportError as exc:
        raise fail(
            ModelFault.UNREACHABLE,
            f"{label} could not be reached or dropped the connection ({type(exc).__name__}).",
        ) from None
    except httpx.HTTPError as exc:
        raise fail(ModelFault.UNREACHABLE, f"The request to {label} failed ({type(exc).__name__}).") from None


def _check_status(response: httpx.Response, label: str, fail: Any, deadline: float) -> None:
    status = response.status_code
    if 200 <= status < 300:
        return
    if 300 <= status < 400:
        raise fail(
            ModelFault.REDIRECT_REFUSED,
            f"{label} answered HTTP {status} (a redirect). Redirects are never followed, so the new location "
            "was not contacted.",
        )
    detail = _error_detail(response, deadline)
    said = f": {detail}" if detail else "."
    if status in {401, 403}:
        raise fail(
            ModelFault.AUTH, f"{label} refused the credential (HTTP {status}){said} Check the key variable."
        )
    if status == 404:
        raise fail(
            ModelFault.NOT_FOUND,
            f"{label} answered HTTP 404{said} Check the base URL (it should end in /v1 for most servers) "
            "and the model name.",
        )
    if status == 429:
        raise fail(
            ModelFault.RATE_LIMITED, f"{label} is rate limiting requests (HTTP 429){said} Try again later."
        )
    if status >= 500:
        raise fail(ModelFault.SERVER_ERROR, f"{label} failed with HTTP {status}{said}")
    raise fail(ModelFault.REJECTED, f"{label} rejected the request (HTTP {status}){said}")


def _error_detail(response: httpx.Response, deadline: float) -> str:
    raw = b""
    try:
        for chunk in response.iter_bytes():
            raw += chunk
            if len(raw) > _ERROR_BODY_BYTES or monotonic() > deadline:
                break
        body = json.loads(raw)
    except (ValueError, httpx.HTTPError):
        return ""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    return detail_of(body, "message", "detail", "error")


def _whole_answer(response: httpx.Response, label: str, fail: Any, deadline: float) -> str:
    raw = b""
    for chunk in response.iter_bytes():
        raw += chunk
        if len(raw) > MAX_BODY_BYTES:
            raise fail(
                ModelFault.TOO_LARGE, f"{label}'s answer passed the 4 MiB limit; reading stopped there."
            )
        if monotonic() > deadline:
            raise httpx.ReadTimeout("deadline")
    try:
        body = json.loads(raw)
        choice = body["choices"][0]
        text = choice["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise fail(
            ModelFault.BAD_RESPONSE, f"{label} answered with JSON that is not a chat completion."
        ) from None
    if not isinstance(text, str):
        raise fail(ModelFault.BAD_RESPONSE, f"{label} answered with JSON that is not a chat completion.")
    if choice.get("finish_reason") == "length":
        raise fail(
            ModelFault.LENGTH_LIMIT,
            f"{label} stopped at its output-token limit; the cut answer was not stored.",
        )
    return text


def _events(
    response: httpx.Response, label: str, fail: Any, deadline: float, timed_out: str
) -> Iterator[str]:
    size = 0
    finished = False
    for line in response.iter_lines():
        size += len(line) + 1
        if size > MAX_BODY_BYTES:
            raise fail(
                ModelFault.TOO_LARGE, f"{label}'s answer passed the 4 MiB limit; reading stopped there."
            )
        if monotonic() > deadline:
            raise fail(ModelFault.TIMEOUT, timed_out)
        if not line.startswith("data:"):
            continue  # comments (": keep-alive"), "event:" and "id:" lines, blank separators
        data = line[5:].strip()
        if data == "[DONE]":
            finished = True
            break
        piece, finish_reason = _chunk(data, label, fail)
        if piece:
            yield piece
        if finish_reason == "length":
            raise fail(
                ModelFault.LENGTH_LIMIT,
                f"{label} stopped at its output-token limit; the cut answer was not stored.",
            )
        if finish_reason is not None:
            finished = True
    if not finished:
        raise fail(
            ModelFault.STREAM_TRUNCATED,
            f"{label}'s stream ended before the answer was finished; the partial answer was not stored.",
        )


def _chunk(data: str, label: str, fail: Any) -> tuple[str, str | None]:
    try:
        chunk = json.loads(data)
    except ValueError:
        raise fail(ModelFault.BAD_RESPONSE, f"{label} sent a stream event that is not JSON.") from None
    if isinstance(chunk, dict) and "error" in chunk:
        error = chunk["error"]
        detail = detail_of(error if isinstance(error, dict) else {"message": error}, "message")
        raise fail(
            ModelFault.SERVER_ERROR,
            f"{label} reported an error mid-answer" + (f": {detail}" if detail else "."),
        )
    try:
        choices = chunk["choices"]
        if not choices:  # a usage-only chunk
            return "", None
        choice = choices[0]
        delta = choice.get("delta") or {}
        piece = delta.get("content") or ""
        finish_reason = choice.get("finish_reason")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise fail(
            ModelFault.BAD_RESPONSE, f"{label} sent a stream event that is not a chat completion chunk."
        ) from None
    if not isinstance(piece, str) or not (finish_reason is None or isinstance(finish_reason, str)):
        raise fail(
            ModelFault.BAD_RESPONSE, f"{label} sent a stream event that is not a chat completion chunk."
        )
    return piece, finish_reason
