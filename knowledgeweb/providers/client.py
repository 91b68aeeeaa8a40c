"""The one HTTP client factory every adapter uses (docs/providers.md).

- redirects are never followed: a 3xx is an error and its target is never contacted;
- the binding's timeout is ONE deadline for the whole search (``ProviderSession``):
  every request, connection, header and body byte of the search must fit in it
  (``knowledgeweb.providers.network`` enforces it on every socket operation);
- a connection may cap the requests in flight at its origin across the whole process;
- bodies are read as a stream and the read stops past ``MAX_BODY_BYTES``;
- the credential travels only in a header and is redacted from every error.

Tests substitute exactly one thing, the transport, through ``transport_override``.
"""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from functools import cache
from types import TracebackType
from typing import Any

import httpx

from knowledgeweb.providers.deadline import Deadline, DeadlinePassedError
from knowledgeweb.providers.errors import (
    MalformedResponseError,
    ProviderConfigurationError,
    ProviderError,
    ProviderHTTPError,
    ProviderRateLimitedError,
    ProviderRedirectError,
    ProviderTimeoutError,
    ProviderUnavailableError,
    ResponseTooLargeError,
)
from knowledgeweb.providers.network import DeadlineTransport
from knowledgeweb.providers.redaction import Redactor
from knowledgeweb.providers.slots import NoSlotInTimeError, origin_of, request_slot

#: Response bodies are capped at 4 MiB.
MAX_BODY_BYTES = 4 * 1024 * 1024

_override_lock = threading.Lock()
_overrides: list[httpx.BaseTransport] = []

_ParamValue = str | int | float | bool | None
QueryParams = Mapping[str, _ParamValue] | list[tuple[str, _ParamValue]]


@contextmanager
def transport_override(transport: httpx.BaseTransport) -> Iterator[httpx.BaseTransport]:
    """Route every client the factory builds through ``transport`` (tests use ``httpx.MockTransport``)."""
    with _override_lock:
        _overrides.append(transport)
    try:
        yield transport
    finally:
        with _override_lock:
            _overrides.remove(transport)


@cache
def _tls_context() -> ssl.SSLContext:
    """One verifying TLS context for the process.

    Building one loads the CA bundle, which costs about 17 ms: more than our whole
    share of a search. A context is safe to share between threads and clients.
    """
    return httpx.create_ssl_context()


def build_client(
    *, timeout: float, transport: httpx.BaseTransport | None = None, deadline: Deadline | None = None
) -> httpx.Client:
    """The only place an ``httpx.Client`` is made for a provider.

    Without a test transport, requests go through ``DeadlineTransport``, which ends
    every network operation at ``deadline`` (a new one of ``timeout`` seconds if none is given).
    """
    if transport is None and _overrides:
        transport = _overrides[-1]
    if transport is None:
        transport = DeadlineTransport(deadline=deadline or Deadline(timeout), ssl_context=_tls_context())
    return httpx.Client(
        follow_redirects=False,
        timeout=timeout,
        transport=transport,
        verify=_tls_context(),
        # No proxy or .netrc credentials from the environment: a request carries
        # exactly the binding's credential and nothing broader.
        trust_env=False,
    )


@dataclass(frozen=True)
class Connection:
    """Everything an adapter needs to reach its provider. ``repr`` never shows the credential."""

    label: str
    base_url: str
    timeout: float
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    secrets: tuple[str, ...] = field(default=(), repr=False)
    transport: httpx.BaseTransport | None = field(default=None, repr=False, compare=False)
    #: At most this many requests in flight at this origin, across every search in the process.
    max_in_flight: int | None = None

    def __post_init__(self) -> None:
        try:
            url = httpx.URL(self.base_url) if self.base_url else None
        except httpx.InvalidURL:
            url = None
        if url is None or url.scheme not in {"http", "https"} or not url.host:
            raise ProviderConfigurationError(
                f"{self.label} needs an http:// or https:// base URL; no request was sent."
            )

    @property
    def redactor(self) -> Redactor:
        return Redactor([*self.secrets, *self.headers.values()])


@dataclass(frozen=True)
class Reply:
    """A provider answer: HTTP status and decoded, credential-redacted JSON.

    ``body`` is ``None`` when a non-2xx answer carried no JSON.
    """

    status: int
    body: Any


def detail_of(body: Any, *keys: str, limit: int = 300) -> str:
    """The provider's own explanation from an error body, shortened for display."""
    if isinstance(body, dict):
        for key in keys:
            value = body.get(key)
            if isinstance(value, str) and value.strip():
                text = " ".join(value.split())
                return text if len(text) <= limit else text[: limit - 1] + "…"
    return ""


class ProviderSession:
    """One client and ONE deadline for one search; use as a context manager.

    Every request of the search shares the deadline, so the binding's timeout
    bounds the search as a whole, however many requests it makes.
    """

    def __init__(self, connection: Connection, *, deadline: Deadline | None = None) -> None:
        self._connection = connection
        self._redactor = connection.redactor
        self._base = connection.base_url.rstrip("/")
        self.deadline = deadline or Deadline(connection.timeout)
        self._origin = origin_of(connection.base_url)
        self._client = build_client(
            timeout=connection.timeout, transport=connection.transport, deadline=self.deadline
        )

    def __enter__(self) -> ProviderSession:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._client.close()

    @property
    def redactor(self) -> Redactor:
        return self._redactor

    def get(self, path: str, *, params: QueryParams | None = None, action: str = "request") -> Reply:
        return self.request("GET", path, params=params, action=action)

    def post(self, path: str, *, json_body: Any, action: str = "request") -> Reply:
        return self.request("POST", path, json_body=json_body, action=action)

    def request(
        self,
        method: str,
        path: str,
        *,
        params: QueryParams | None = None,
        json_body: Any = None,
        action: str = "request",
    ) -> Reply:
        """Send one request; raise a redacted ``ProviderError`` for anything but a readable answer.

        ``action`` names the request in a timeout message ("the retrieval request").
        """
        label = self._connection.label
        stage = "before it could send"
        try:
            with self._slot():
                self.deadline.bound(None)  # nothing starts once the deadline has passed
                stage = "while connecting for"
                with self._client.stream(
                    method,
                    self._base + path,
                    params=params,
                    json=json_body,
                    # Ask for the body as it is: a compressed one could expand past the cap
                    # before anything counts it (see ``_read_capped``).
                    headers={**self._connection.headers, "Accept-Encoding": "identity"},
                ) as response:
                    stage = "while reading the response body of"
                    status = response.status_code
                    if 300 <= status < 400:
                        raise self._fail(
                            ProviderRedirectError,
                            f"{label} answered HTTP {status} (a redirect). Redirects are never followed, "
                            "so the new location was not contacted.",
                        )
                    raw = self._read_capped(response, action)
        except NoSlotInTimeError:
            limit = self._connection.max_in_flight
            raise self._timeout(
                f"while waiting for one of the {limit} requests this process lets run at once at "
                f"{self._origin}, before it could send",
                action,
            ) from None
        except DeadlinePassedError:
            raise self._timeout(stage, action) from None
        except httpx.TimeoutException as exc:
            if stage == "while connecting for" and isinstance(exc, httpx.WriteTimeout):
                stage = "while sending"
            elif stage == "while connecting for" and not isinstance(exc, httpx.ConnectTimeout):
                stage = "while waiting for the response headers of"
            raise self._timeout(stage, action) from None
        except httpx.TransportError as exc:
            raise self._fail(
                ProviderUnavailableError, f"{label} could not be reached ({type(exc).__name__}: {exc})."
            ) from None
        except httpx.HTTPError as exc:
            # Anything else httpx raises (a body it cannot decode, for one) is still a clear failure.
            raise self._fail(
                ProviderUnavailableError, f"The request to {label} failed ({type(exc).__name__}: {exc})."
            ) from None
        try:
            body: Any = self._redactor.json(json.loads(raw)) if raw.strip() else None
        except (ValueError, RecursionError):
            # RecursionError: JSON nested deeper than the parser or the redaction walk goes.
            if 200 <= status < 300:
                raise self._fail(
                    MalformedResponseError, f"{label} answered with malformed JSON (HTTP {status})."
                ) from None
            body = None
        if status == 429:
            retry = response.headers.get("retry-after", "").strip()
            hint = f" It asks to retry after {retry} seconds." if retry.isdigit() else ""
            raise self._fail(ProviderRateLimitedError, f"{label} answered HTTP 429: too many requests.{hint}")
        if status >= 500:
            detail = detail_of(body, "detail", "message")
            raise self._fail(
                ProviderHTTPError,
                f"{label} answered HTTP {status}" + (f": {detail}" if detail else "."),
                status=status,
            )
        if 200 <= status < 300 and body is None:
            raise self._fail(MalformedResponseError, f"{label} answered with an empty body (HTTP {status}).")
        return Reply(status=status, body=body)

    def _slot(self) -> Any:
        limit = self._connection.max_in_flight
        if limit is None:
            return nullcontext()
        return request_slot(self._origin, limit, self.deadline)

    def _read_capped(self, response: httpx.Response, action: str) -> bytes:
        label = self._connection.label
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            raise self._fail(
                ResponseTooLargeError,
                f"{label}'s response is larger than the 4 MiB limit; it was not read.",
            )
        # We asked for ``identity``. A server that compresses anyway is refused rather
        # than decoded: a small compressed chunk can inflate to gigabytes before any
        # count sees it.
        encoding = response.headers.get("content-encoding", "").strip().lower()
        if encoding not in {"", "identity"}:
            raise self._fail(
                MalformedResponseError,
                f"{label} answered with a {encoding!r}-encoded body although an uncompressed one "
                "was asked for; it was not read.",
            )
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise self._fail(
                    ResponseTooLargeError,
                    f"{label}'s response passed the 4 MiB limit; reading stopped there.",
                )
            chunks.append(chunk)
            # The network transport already ends every read at the deadline; this also
            # bounds a transport that yields without touching a socket (tests' mocks).
            if self.deadline.passed:
                raise DeadlinePassedError()
        return b"".join(chunks)

    def _timeout(self, stage: str, action: str) -> ProviderError:
        label = self._connection.label
        return self._fail(
            ProviderTimeoutError,
            f"{label} sent no complete answer within {self.deadline.seconds:g} s, the binding's timeout "
            f"for the whole search; it ran out {stage} the {action}.",
        )

    def _fail(self, error: type[ProviderError], message: str, **extra: Any) -> ProviderError:
        # The retrieval service logs failures; here we only make sure the message is safe.
        return error(self._redactor.message(message), **extra)
