"""An httpx transport whose every blocking operation ends at the search's deadline.

httpcore applies a timeout to each socket operation, and a server that sends one
byte just inside it can hold a call open for ever. Here each operation — name
resolution, connect, TLS handshake, every send and every receive, and the wait for
a pooled connection — gets ``min(its own timeout, what is left of the deadline)``
as its socket timeout, so the kernel itself abandons it at the deadline; once the
deadline has passed no operation starts. This is the cancellation: nothing has to
be closed from another thread, and a request in any phase stops within one socket
timeout of the deadline. A caller that must stop sooner (an answer model whose
client went away) cancels the deadline, which shuts its sockets down.

Only public httpcore interfaces are used (``ConnectionPool``, ``NetworkBackend``,
``NetworkStream`` and its exceptions); httpcore's errors are mapped to httpx's as
httpx's own transport maps them.
"""

from __future__ import annotations

import ipaddress
import select
import socket
import ssl
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from typing import Any

import httpcore
import httpx

from knowledgeweb.providers.deadline import Deadline, DeadlinePassedError

#: Name resolution has no timeout of its own, so it runs here and is waited for
#: only until the deadline. A few workers: a resolver that hangs ties up at most these.
_resolver = ThreadPoolExecutor(max_workers=4, thread_name_prefix="provider-dns")

_SocketOption = tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]


class DeadlineStream(httpcore.NetworkStream):
    """A socket whose every operation is bounded by the deadline."""

    def __init__(self, sock: socket.socket, deadline: Deadline) -> None:
        self._sock = sock
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        with _mapped(httpcore.ReadTimeout, httpcore.ReadError):
            self._sock.settimeout(self._deadline.bound(timeout))
            return self._sock.recv(max_bytes)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        with _mapped(httpcore.WriteTimeout, httpcore.WriteError):
            while buffer:
                self._sock.settimeout(self._deadline.bound(timeout))
                sent = self._sock.send(buffer)
                buffer = buffer[sent:]

    def close(self) -> None:
        self._sock.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        try:
            with _mapped(httpcore.ConnectTimeout, httpcore.ConnectError):
                # CPython treats a socket timeout as the deadline of the whole handshake.
                self._sock.settimeout(self._deadline.bound(timeout))
                tls = ssl_context.wrap_socket(self._sock, server_hostname=server_hostname)
        except Exception:
            self.close()
            raise
        return DeadlineStream(tls, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        if info == "ssl_object":
            # httpcore asks only for ``selected_alpn_protocol()``, which the SSL socket offers.
            return self._sock if isinstance(self._sock, ssl.SSLSocket) else None
        if info == "client_addr":
            return self._sock.getsockname()
        if info == "server_addr":
            return self._sock.getpeername()
        if info == "socket":
            return self._sock
        if info == "is_readable":
            return _readable(self._sock)
        return None


class DeadlineBackend(httpcore.NetworkBackend):
    """Opens TCP connections within the deadline, name resolution included."""

    def __init__(self, deadline: Deadline) -> None:
        self._deadline = deadline

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[_SocketOption] | None = None,
    ) -> httpcore.NetworkStream:
        with _mapped(httpcore.ConnectTimeout, httpcore.ConnectError):
            addresses = self._resolve(host, port, timeout)
            failure: OSError | None = None
            for family, kind, proto, _, address in addresses:
                sock = socket.socket(family, kind, proto)
                try:
                    for option in socket_options or ():
                        sock.setsockopt(*option)
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    if local_address is not None:
                        sock.bind((local_address, 0))
                    sock.settimeout(self._deadline.bound(timeout))
                    # A cancelled deadline shuts the socket down, even mid-connect.
                    self._deadline.watch(sock)
                    sock.connect(address)
                except (OSError, DeadlinePassedError) as exc:
                    sock.close()
                    if isinstance(exc, socket.timeout | DeadlinePassedError):
                        raise
                    failure = exc
                    continue
                return DeadlineStream(sock, self._deadline)
            raise failure or OSError(f"no address found for {host}")

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[_SocketOption] | None = None
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("providers are reached over TCP only")

    def sleep(self, seconds: float) -> None:
        # httpcore sleeps only between connection retries, which this project never configures.
        raise httpcore.ConnectError("connection retries are not used")

    def _resolve(self, host: str, port: int, timeout: float | None) -> list[Any]:
        try:
            ipaddress.ip_address(host)
        except ValueError:
            pass
        else:
            return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        future = _resolver.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
        try:
            return future.result(timeout=self._deadline.bound(timeout))
        except FutureTimeout:
            future.cancel()
            raise TimeoutError(f"resolving {host} took longer than the deadline allowed") from None


class DeadlineTransport(httpx.BaseTransport):
    """An HTTP/1.1 connection pool over ``DeadlineBackend``; no proxies, no environment."""

    def __init__(self, *, deadline: Deadline, ssl_context: ssl.SSLContext) -> None:
        self._deadline = deadline
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context, http1=True, http2=False, network_backend=DeadlineBackend(deadline)
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if not isinstance(request.stream, httpx.SyncByteStream):
            raise TypeError("DeadlineTransport sends synchronous requests only")
        extensions = dict(request.extensions)
        timeouts = extensions.get("timeout")
        with _httpx_errors():
            if isinstance(timeouts, dict):
                # The pool wait, too, ends at the deadline.
                try:
                    extensions["timeout"] = {key: self._deadline.bound(v) for key, v in timeouts.items()}
                except DeadlinePassedError as exc:
                    raise httpcore.PoolTimeout(str(exc)) from None
            core_request = httpcore.Request(
                method=request.method,
                url=httpcore.URL(
                    scheme=request.url.raw_scheme,
                    host=request.url.raw_host,
                    port=request.url.port,
                    target=request.url.raw_path,
                ),
                headers=request.headers.raw,
                content=request.stream,
                extensions=extensions,
            )
            response = self._pool.handle_request(core_request)
        if not isinstance(response.stream, Iterable):
            raise TypeError("httpcore returned an asynchronous stream to a synchronous pool")
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ResponseStream(response.stream),
            extensions=response.extensions,
        )

    def close(self) -> None:
        self._pool.close()


class _ResponseStream(httpx.SyncByteStream):
    def __init__(self, stream: Iterable[bytes]) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        with _httpx_errors():
            yield from self._stream

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()


# httpcore's errors and the httpx errors they become, most specific first.
_HTTPX_ERRORS: tuple[tuple[type[Exception], type[httpx.HTTPError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextmanager
def _httpx_errors() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for core, mapped in _HTTPX_ERRORS:
            if isinstance(exc, core):
                raise mapped(str(exc)) from exc
        raise


@contextmanager
def _mapped(on_timeout: type[Exception], on_error: type[Exception]) -> Iterator[None]:
    try:
        yield
    except (TimeoutError, DeadlinePassedError) as exc:  # socket.timeout is TimeoutError
        raise on_timeout(str(exc) or "timed out") from exc
    except OSError as exc:
        raise on_error(str(exc)) from exc


def _readable(sock: socket.socket) -> bool:
    """Whether a read would return at once (data, or the end of a closed connection)."""
    fd = sock.fileno()
    if fd < 0:
        return True
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))
