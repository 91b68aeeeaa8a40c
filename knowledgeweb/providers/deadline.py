"""One monotonic deadline per search (docs/decisions/0009-one-deadline-per-search.md).

A binding's timeout bounds the whole search: every request, connection, TLS
handshake, header and body byte, and every wait for a request slot. httpx's own
timeouts restart with each network operation, so a server trickling one byte at
a time would never trip them; instead every blocking operation is given only
what is left of this deadline (see ``knowledgeweb.providers.network``).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable
from time import monotonic


class DeadlinePassedError(Exception):
    """Raised by ``Deadline.bound`` once nothing is left; the network layer turns it into a timeout."""


class Deadline:
    """``seconds`` from its creation, on a monotonic clock; safe to share between threads."""

    def __init__(self, seconds: float, *, clock: Callable[[], float] = monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._expires_at = clock() + seconds
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._cancelled = False

    def watch(self, sock: socket.socket) -> None:
        """Shut ``sock`` down when the deadline is cancelled (at once, if it already is)."""
        with self._lock:
            if not self._cancelled:
                self._sockets.append(sock)
                return
        _shut(sock)

    def cancel(self) -> None:
        """End the call now, from any thread: no operation starts any more, and the sockets
        working under the deadline are shut down, which wakes a read blocked on one (a model
        that is silent) at once rather than at the deadline."""
        with self._lock:
            self._cancelled = True
            self._expires_at = min(self._expires_at, self._clock())
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            _shut(sock)

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def remaining(self) -> float:
        """Seconds left, never negative."""
        return max(0.0, self._expires_at - self._clock())

    @property
    def passed(self) -> bool:
        return self._clock() >= self._expires_at

    def bound(self, timeout: float | None) -> float:
        """The timeout for one blocking operation: ``timeout``, but never past the deadline.

        Raises ``DeadlinePassedError`` when nothing is left, so no operation starts late.
        """
        left = self._expires_at - self._clock()
        if left <= 0:
            raise DeadlinePassedError(f"the {self.seconds:g} s deadline has passed")
        return left if timeout is None else min(timeout, left)


def _shut(sock: socket.socket) -> None:
    # Already closed or never connected: nothing is waiting on it.
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
