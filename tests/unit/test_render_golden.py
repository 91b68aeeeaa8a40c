"""The renderer's output on a fixed corpus is pinned, so that any change to it is deliberate.

Each ``tests/golden/render/<case>.md`` renders (as an answer, against fixed
evidence) to ``<case>.html`` and exports to ``<case>.export.md``. After a
deliberate change, regenerate with ``KNOWLEDGEWEB_UPDATE_GOLDEN=1`` and review
the diff; the renderer fingerprint changes with the code anyway, so stored
renders are refreshed (docs/decisions.md, "Render at write").
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from knowledgeweb.knowledge import Evidence
from knowledgeweb.threads.rendering.export import message_export_parts
from knowledgeweb.threads.rendering.pipeline import render_assistant_content

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "render"
SHARED = "5" * 32
NATIVE = "6" * 32
EVIDENCE = {
    f"knowledge-source-{SHARED}": Evidence(
        handle=f"knowledge-source-{SHARED}",
        form="shared",
        id=SHARED,
        provider="local",
        title="Shared doc",
        excerpt="Shared excerpt.",
    ),
    f"knowledge-{NATIVE}-1": Evidence(
        handle=f"knowledge-{NATIVE}-1",
        form="native",
        id=f"{NATIVE}-1",
        provider="ragflow",
        title="manual.pdf",
        excerpt="Native excerpt.",
    ),
}
CASES = sorted(p.stem for p in GOLDEN.glob("*.md") if not p.name.endswith(".export.md"))


def _source(case: str) -> str:
    return (GOLDEN / f"{case}.md").read_text().replace("SHARED", SHARED).replace("NATIVE", NATIVE)


def _export_text(parts: Sequence[object]) -> str:
    return "".join(part if isinstance(part, str) else f"[[cite {part['handle']}]]" for part in parts)  # type: ignore[index]


@pytest.mark.parametrize("case", CASES)
def test_the_renderer_output_is_pinned(case: str) -> None:
    rendered = render_assistant_content(_source(case), EVIDENCE)
    html = rendered.html
    export = _export_text(message_export_parts(rendered.parsed, rendered.verdicts)) + "\n"
    if os.environ.get("KNOWLEDGEWEB_UPDATE_GOLDEN") == "1":
        (GOLDEN / f"{case}.html").write_text(html)
        (GOLDEN / f"{case}.export.md").write_text(export)
    assert html == (GOLDEN / f"{case}.html").read_text()
    assert export == (GOLDEN / f"{case}.export.md").read_text()


def test_the_corpus_is_there() -> None:
    assert CASES == ["basics", "citations", "code", "gfm", "hostile"]
