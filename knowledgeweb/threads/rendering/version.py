"""Which renderer made a stored render: an explicit number, guarded by the golden corpus.

A stored render (``MessageRender``) records the ``RENDERER_VERSION`` it was made
with. Raise the number with any change to what the renderer outputs for the same
message (HTML, citation verdicts, evidence, panel entries, export text): the golden
corpus (``tests/golden/render``) stores the version its files were made with, and
its test fails when an output changes while the version did not. Edits that change
no output (a docstring, a refactor, a library patch release) leave stored renders
current.

A render from an older version is served as stored until ``manage.py rerender``
(run by the deploy after start, and by writes to its thread) replaces it, except a
render below ``MIN_SAFE_RENDERER_VERSION``, which is never served: a fix that
matters for safety (the sanitizer, say) raises both numbers, and until the render
is replaced a read renders that message in memory for its response without storing it.
"""

from __future__ import annotations

#: The renderer's output version. Raise it with every change to any golden output.
RENDERER_VERSION = 3

#: Stored renders below this version are never served. Never above ``RENDERER_VERSION``.
#: Renders stored before versions existed carry 0.
MIN_SAFE_RENDERER_VERSION = 1


def render_is_current(version: int) -> bool:
    """Made by the running renderer: nothing to redo."""
    return version == RENDERER_VERSION


def render_is_servable(version: int) -> bool:
    """Safe to show as stored, even if older than the running renderer."""
    return version >= MIN_SAFE_RENDERER_VERSION
