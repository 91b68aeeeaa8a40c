"""What a deploy with a changed renderer looks like to the process: another renderer version."""

from __future__ import annotations

import pytest

from knowledgeweb.threads.rendering import version


def renderer_changed(monkeypatch: pytest.MonkeyPatch, *, to: int = 2, min_safe: int | None = None) -> None:
    """Run as renderer version ``to``; ``min_safe`` raises the oldest render still served."""
    monkeypatch.setattr(version, "RENDERER_VERSION", to)
    if min_safe is not None:
        monkeypatch.setattr(version, "MIN_SAFE_RENDERER_VERSION", min_safe)
