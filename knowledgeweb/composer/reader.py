"""An answer model read on a thread of its own, so that the turn never waits on it blind.

The turn (``composer.services.turn_events``) takes the model's pieces from a queue
and, whenever ``tick`` seconds pass, gets a ``None`` instead: the stream then sends a
heartbeat, and a WSGI server notices a client that went away at that write even
while the model is silent. Closing the pieces' generator (the client left, or the
turn stopped reading: an answer past its cap or holding unstorable text) cancels the
call: its deadline is cancelled, which shuts its socket down and wakes the blocked
read at once. The reader thread only reads the model; it never touches the database.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Iterator
from time import monotonic
from typing import Literal

from knowledgeweb.composer.client import ChatServer, chat_stream
from knowledgeweb.composer.errors import ModelError, ModelFault
from knowledgeweb.providers.deadline import Deadline

logger = logging.getLogger(__name__)

_Item = tuple[Literal["piece"], str] | tuple[Literal["end"], None] | tuple[Literal["fault"], ModelError]


def model_pieces(
    server: ChatServer, messages: list[dict[str, str]], *, tick: float | None
) -> Iterator[str | None]:
    """The answer's pieces as they arrive, and ``None`` every ``tick`` seconds (never, when None).

    Raises ``ModelError`` as ``chat_stream`` does. Closing the generator cancels the call.
    """
    deadline = Deadline(server.timeout)
    items: queue.SimpleQueue[_Item] = queue.SimpleQueue()
    reader = threading.Thread(
        target=_read, args=(server, messages, deadline, items), name="answer-model", daemon=True
    )
    reader.start()
    beat = None if tick is None else monotonic() + tick
    try:
        while True:
            try:
                item = items.get(timeout=None if beat is None else max(0.0, beat - monotonic()))
            except queue.Empty:
                item = None
            if beat is not None and monotonic() >= beat:
                beat = monotonic() + (tick or 0.0)
                yield None
            if item is None:
                continue
            if item[0] == "piece":
                yield item[1]
            elif item[0] == "fault":
                raise item[1]
            else:
                return
    finally:
        deadline.cancel()


def _read(
    server: ChatServer, messages: list[dict[str, str]], deadline: Deadline, items: queue.SimpleQueue[_Item]
) -> None:
    stream = chat_stream(server, messages, deadline=deadline)
    try:
        for piece in stream:
            if deadline.cancelled:
                return
            items.put(("piece", piece))
        items.put(("end", None))
    except ModelError as exc:
        items.put(("fault", exc))
    except Exception as exc:  # whatever broke, the turn must still end recorded
        if not deadline.cancelled:
            logger.exception("Reading %s failed unexpectedly", server.label)
        items.put(
            (
                "fault",
                ModelError(
                    ModelFault.BAD_RESPONSE,
                    f"Reading the answer from {server.label} failed unexpectedly ({type(exc).__name__}).",
                ),
            )
        )
    finally:
        stream.close()
