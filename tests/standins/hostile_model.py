"""A hostile OpenAI-compatible answer model: the answers an attack on a turn would send.

Each mode is a responder for the scriptable chat server (``tests.standins.chat_server``),
so it speaks OpenAI's wire format exactly and only its answer is hostile:

- ``long``: about 5 MB of well-formed sentences in 2,000-character pieces, past both the
  answer cap (40,000 characters) and the 4 MiB body cap;
- ``fifty``: fifty thousand characters of well-formed sentences, just past the answer cap;
- ``nosentence``: 400,000 characters with no sentence end (one endless sentence);
- ``nul``: a first sentence, then a piece holding a NUL (U+0000, sent as ``\\u0000``);
- ``surrogate``: a first sentence, then a piece holding a lone surrogate (``\\ud800``);
- ``stall``: a first sentence, then silence with the connection held open (until the
  client closes it or the test releases it).

Run it as a process for a benchmark or a manual attack::

    python -m tests.standins.hostile_model --mode long [--port 0]

Its first line on stdout is ``listening on http://HOST:PORT/v1``.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

from tests.standins.chat_server import Reply, serve

#: A well-formed sentence of 50 characters.
SENTENCE = "Kingfishers dive for fish from a low river perch. "
FIRST = "Kingfishers dive for fish from a perch. "
MODES: dict[str, Callable[[], Reply]] = {
    "long": lambda: Reply(text=SENTENCE * 100_000, piece_chars=2_000),
    "fifty": lambda: Reply(text=SENTENCE * 1_000, piece_chars=500),
    "nosentence": lambda: Reply(text="word " * 80_000, piece_chars=1_000),
    "nul": lambda: Reply(text=FIRST + "Then a NUL \x00 arrives. " + SENTENCE * 3),
    "surrogate": lambda: Reply(text=FIRST + "Then a lone \ud800 half. " + SENTENCE * 3),
    "stall": lambda: Reply(text=FIRST + SENTENCE * 5, stall_after=len(FIRST.split()) + 1),
}


def hostile(mode: str) -> Callable[[dict[str, Any]], Reply]:
    """The responder for ``mode`` (one of ``MODES``), whatever the request asks."""
    make = MODES[mode]
    return lambda body: make()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--mode", choices=sorted(MODES), required=True)
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    options = parser.parse_args(argv)
    with serve(hostile(options.mode), port=options.port) as server:
        sys.stdout.write(f"listening on {server.base_url}\n")
        sys.stdout.flush()
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C ends it
            server.release.wait()


if __name__ == "__main__":
    main()
