"""A dependency-free progress bar for management commands."""

from __future__ import annotations

from typing import Protocol


class _Stream(Protocol):
    def write(self, msg: str, /) -> object: ...
    def flush(self) -> object: ...


class ProgressBar:
    """Draws ``[#####-----] 3/10 name`` on ``stream``.

    On a terminal the bar redraws in place; anywhere else (a pipe, a log, a test)
    each step is its own line, so the output stays readable.
    """

    def __init__(self, stream: _Stream, *, interactive: bool, width: int = 30) -> None:
        self.stream = stream
        self.interactive = interactive
        self.width = width
        self._drawn = False

    def update(self, done: int, total: int, label: str = "") -> None:
        filled = self.width if total <= 0 else self.width * done // total
        line = f"[{'#' * filled}{'-' * (self.width - filled)}] {done}/{total} {label}"
        if self.interactive:
            # Pad so a shorter label fully covers the previous one.
            self.stream.write("\r" + line[:120].ljust(120))
            self._drawn = True
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False
