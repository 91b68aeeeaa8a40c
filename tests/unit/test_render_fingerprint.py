"""Fingerprints follow what determines a render; no constant has to be remembered."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from knowledgeweb.threads.rendering import fingerprint


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    fingerprint.render_fingerprint.cache_clear()
    fingerprint.reader_fingerprint.cache_clear()
    yield
    fingerprint.render_fingerprint.cache_clear()
    fingerprint.reader_fingerprint.cache_clear()


def _copy_with_change(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, module: str) -> None:
    """Serve ``module``'s source from a copy with one byte more, as a code change would."""
    real = fingerprint.module_path
    changed = tmp_path / Path(real(module)).name
    shutil.copy(real(module), changed)
    changed.write_text(changed.read_text() + "\n# changed\n")
    monkeypatch.setattr(fingerprint, "module_path", lambda name: changed if name == module else real(name))


@pytest.mark.django_db
@pytest.mark.parametrize("module", fingerprint.RENDER_MODULES)
def test_changing_any_renderer_input_gives_a_new_render_fingerprint(
    module: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    before = fingerprint.render_fingerprint()
    _copy_with_change(monkeypatch, tmp_path, module)
    fingerprint.render_fingerprint.cache_clear()
    assert fingerprint.render_fingerprint() != before


def test_changing_the_reader_gives_a_new_validation_cache_namespace(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from knowledgeweb.threads.evidence import evidence_cache_key
    from knowledgeweb.threads.models import Message

    message = Message(type="tool", content="x", digest="d" * 64)
    before = evidence_cache_key(message)
    _copy_with_change(monkeypatch, tmp_path, "knowledgeweb.knowledge.reading")
    fingerprint.reader_fingerprint.cache_clear()
    after = evidence_cache_key(message)
    assert after != before
    assert after.endswith(f":{message.id}:{message.digest}")


def test_a_library_upgrade_gives_a_new_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    paths = [fingerprint.module_path("knowledgeweb.knowledge.linkgrammar")]
    before = fingerprint.compute_fingerprint(paths, ["markdown-it-py", "bleach"])
    real_version = fingerprint.version
    monkeypatch.setattr(fingerprint, "version", lambda p: "99.0" if p == "bleach" else real_version(p))
    assert fingerprint.compute_fingerprint(paths, ["markdown-it-py", "bleach"]) != before


@pytest.mark.django_db
def test_the_template_of_tool_views_is_an_input(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    before = fingerprint.render_fingerprint()
    real = fingerprint.template_path
    changed = tmp_path / "tool_message.html"
    changed.write_text(real("web/fragments/tool_message.html").read_text() + "<!-- changed -->")
    monkeypatch.setattr(fingerprint, "template_path", lambda name: changed)
    fingerprint.render_fingerprint.cache_clear()
    assert fingerprint.render_fingerprint() != before


def test_no_hand_bumped_version_constant_is_left() -> None:
    from knowledgeweb.threads import evidence
    from knowledgeweb.web.rendering import thread

    assert not hasattr(thread, "RENDERER_VERSION")
    assert not hasattr(evidence, "EVIDENCE_CACHE_VERSION")
