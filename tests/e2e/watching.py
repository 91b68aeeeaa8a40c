"""What the browser tests watch a page for."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Watched:
    """What a page did that it must not: alerts and other dialogs, script errors, console errors."""

    dialogs: list[str]
    errors: list[str]
