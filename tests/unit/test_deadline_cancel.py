"""A cancelled deadline ends a call at once, even one blocked reading a silent server."""

from __future__ import annotations

import socket
import threading

import pytest

from knowledgeweb.providers.deadline import Deadline, DeadlinePassedError


def test_cancelling_wakes_a_read_blocked_on_a_silent_socket_and_no_operation_starts_after() -> None:
    deadline = Deadline(60)
    ours, silent = socket.socketpair()
    got: list[bytes] = []
    with ours, silent:
        ours.settimeout(deadline.bound(None))
        deadline.watch(ours)
        reader = threading.Thread(target=lambda: got.append(ours.recv(10)))
        reader.start()
        deadline.cancel()
        reader.join(timeout=10)

        assert not reader.is_alive()
    # The shut-down socket reads as closed; nothing came from the silent side.
    assert got == [b""]
    assert deadline.cancelled
    with pytest.raises(DeadlinePassedError):
        deadline.bound(5)


def test_a_socket_watched_after_the_cancel_is_shut_down_at_once() -> None:
    deadline = Deadline(60)
    deadline.cancel()
    ours, other = socket.socketpair()
    with ours, other:
        deadline.watch(ours)

        assert ours.recv(10) == b""
