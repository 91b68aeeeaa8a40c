"""The renderer's output on a fixed corpus is pinned, and changes only with ``RENDERER_VERSION``.

Each ``tests/golden/render/<case>.md`` renders (as an answer, against fixed
evidence) to ``<case>.html`` and exports to ``<case>.export.md``; each
``tools/<case>.json`` (a tool message) is read into evidence and renders to
``tools/<case>.html`` with its panel entries and evidence in
``tools/<case>.stored.json``; each case's text is also rendered as a human message
into ``<case>.human.json``. ``renderer.json`` records the renderer version the files
were made with and a digest of them.

After a deliberate change: raise ``RENDERER_VERSION`` (threads/rendering/version.py),
regenerate with ``KNOWLEDGEWEB_UPDATE_GOLDEN=1`` and review the diff. An output that
changes while the version stays is refused, so a stored render can never silently
differ from what the running renderer would make (docs/decisions/0041-layers-that-hold-and-reads-that-never-write.md).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from uuid import UUID

import pytest

from knowledgeweb.knowledge import Evidence, read_sources
from knowledgeweb.threads.evidence import evidence_to_json
from knowledgeweb.threads.models import Message
from knowledgeweb.threads.rendering import version
from knowledgeweb.threads.rendering.export import message_export_parts
from knowledgeweb.threads.rendering.message import render_message
from knowledgeweb.threads.rendering.pipeline import render_assistant_content

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "render"
TOOLS = GOLDEN / "tools"
MANIFEST = GOLDEN / "renderer.json"
UPDATE = os.environ.get("KNOWLEDGEWEB_UPDATE_GOLDEN") == "1"
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
TOOL_CASES = sorted(p.stem for p in TOOLS.glob("*.json") if not p.name.endswith(".stored.json"))
THREAD = UUID(int=1)


def _source(case: str) -> str:
    return (GOLDEN / f"{case}.md").read_text().replace("SHARED", SHARED).replace("NATIVE", NATIVE)


def _export_text(parts: Sequence[object]) -> str:
    return "".join(part if isinstance(part, str) else f"[[cite {part['handle']}]]" for part in parts)  # type: ignore[index]


def _json(value: object) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def _answer_outputs(case: str) -> dict[str, str]:
    rendered = render_assistant_content(_source(case), EVIDENCE)
    human = render_message(
        Message(id=UUID(int=2), thread_id=THREAD, seq=1, type="human", content=_source(case)), {}, {}
    )
    return {
        f"{case}.html": rendered.html,
        f"{case}.export.md": _export_text(message_export_parts(rendered.parsed, rendered.verdicts)) + "\n",
        f"{case}.human.json": _json({"html": human.html, "export": human.export}),
    }


def _tool_outputs(case: str) -> dict[str, str]:
    fields = json.loads((TOOLS / f"{case}.json").read_text())
    message = Message(id=UUID(int=3), thread_id=THREAD, seq=2, type="tool", **fields)
    own = read_sources(message.name, message.content, message.artifact)
    rendering = render_message(message, {}, own)
    stored = {
        "entries": rendering.entries,
        "sources": [evidence_to_json(source) for source in rendering.sources.values()],
    }
    return {f"tools/{case}.html": rendering.html, f"tools/{case}.stored.json": _json(stored)}


def _all_outputs() -> dict[str, str]:
    outputs: dict[str, str] = {}
    for case in CASES:
        outputs.update(_answer_outputs(case))
    for case in TOOL_CASES:
        outputs.update(_tool_outputs(case))
    return outputs


def _digest(outputs: dict[str, str]) -> str:
    digest = hashlib.sha256()
    for name in sorted(outputs):
        data = outputs[name].encode()
        digest.update(f"{name}:{len(data)}\n".encode())
        digest.update(data)
    return digest.hexdigest()


def _stored(names: Sequence[str]) -> dict[str, str]:
    return {name: (GOLDEN / name).read_text() if (GOLDEN / name).exists() else "" for name in names}


@pytest.mark.parametrize("case", CASES)
def test_the_answer_and_human_renders_are_pinned(case: str) -> None:
    outputs = _answer_outputs(case)
    if UPDATE:
        for name, text in outputs.items():
            (GOLDEN / name).write_text(text)
    assert outputs == _stored(list(outputs))


@pytest.mark.parametrize("case", TOOL_CASES)
def test_the_tool_renders_are_pinned(case: str) -> None:
    outputs = _tool_outputs(case)
    if UPDATE:
        for name, text in outputs.items():
            (GOLDEN / name).write_text(text)
    assert outputs == _stored(list(outputs))


def guard_problem(made: str, running: int, manifest: dict[str, object]) -> str | None:
    """Why the golden outputs (digest ``made``) and the ``running`` version disagree with the
    manifest, or ``None``. An output change must come with a higher version."""
    recorded, pinned = manifest["renderer_version"], manifest["outputs_sha256"]
    assert isinstance(recorded, int)
    if made != pinned and running <= recorded:
        return (
            f"The renderer's golden output changed while RENDERER_VERSION stayed {running} "
            f"(the golden files were made with {recorded}). Raise RENDERER_VERSION in "
            "knowledgeweb/threads/rendering/version.py, then regenerate with KNOWLEDGEWEB_UPDATE_GOLDEN=1: "
            "stored renders of the old version would otherwise be served as if current."
        )
    if made != pinned or running != recorded:
        return (
            f"RENDERER_VERSION is {running} but the golden files were made with {recorded}: "
            "regenerate them with KNOWLEDGEWEB_UPDATE_GOLDEN=1 and review the diff."
        )
    return None


def test_no_golden_output_changes_while_the_renderer_version_stays() -> None:
    """The guard: the outputs' digest names one renderer version, the one in ``renderer.json``."""
    outputs = _all_outputs()
    made = _digest(outputs)
    manifest = json.loads(MANIFEST.read_text())
    problem = guard_problem(made, version.RENDERER_VERSION, manifest)
    if UPDATE and problem is not None and "changed while" not in problem:
        MANIFEST.write_text(_json({"renderer_version": version.RENDERER_VERSION, "outputs_sha256": made}))
        return
    assert problem is None, problem
    # The files on disk are the ones the digest names (none edited by hand).
    assert _digest(_stored(list(outputs))) == manifest["outputs_sha256"]


def test_the_guard_refuses_a_changed_output_under_the_same_version(monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = json.loads(MANIFEST.read_text())
    real = render_assistant_content

    def sanitizer_fix(content: str, available: object, **kwargs: object) -> object:
        rendered = real(content, available, **kwargs)  # type: ignore[arg-type]
        return replace(rendered, html=rendered.html.replace("<p>", '<p class="fixed">'))

    monkeypatch.setattr(f"{__name__}.render_assistant_content", sanitizer_fix)
    made = _digest(_all_outputs())

    assert made != manifest["outputs_sha256"]
    problem = guard_problem(made, version.RENDERER_VERSION, manifest)
    assert problem is not None
    assert f"changed while RENDERER_VERSION stayed {version.RENDERER_VERSION}" in problem
    # Raised, the version lets the change through to regeneration (and nothing else).
    raised = guard_problem(made, version.RENDERER_VERSION + 1, manifest)
    assert raised is not None
    assert "regenerate" in raised
    assert "changed while" not in raised
    assert (
        guard_problem(
            made,
            version.RENDERER_VERSION + 1,
            {**manifest, "outputs_sha256": made, "renderer_version": version.RENDERER_VERSION + 1},
        )
        is None
    )


def test_the_minimum_safe_version_is_never_above_the_renderer_version() -> None:
    assert 1 <= version.MIN_SAFE_RENDERER_VERSION <= version.RENDERER_VERSION


def test_the_corpus_is_there() -> None:
    assert CASES == ["basics", "citations", "code", "gfm", "hostile"]
    assert TOOL_CASES == ["native", "relations", "shared"]
