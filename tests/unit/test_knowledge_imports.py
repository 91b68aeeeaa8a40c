"""The contract core stays pure: importing it loads neither Django nor httpx (docs/architecture.md#layers)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
import knowledgeweb.knowledge
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("django", "httpx", "knowledgeweb"))
print(json.dumps(loaded))
"""


def test_importing_the_contract_core_loads_no_django_or_httpx_module() -> None:
    # A fresh interpreter: this test process has Django loaded already through pytest-django.
    completed = subprocess.run(  # noqa: S603 - fixed arguments, our own interpreter
        [sys.executable, "-E", "-s", "-c", PROBE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    loaded = json.loads(completed.stdout)
    assert "knowledgeweb.knowledge" in loaded  # the probe really imported the package
    assert [m for m in loaded if m.split(".")[0] in ("django", "httpx")] == []


def test_evidence_survives_a_pickle_round_trip_unchanged() -> None:
    import pickle

    from knowledgeweb.knowledge import Evidence

    evidence = Evidence(
        handle="knowledge-" + "a" * 32 + "-1",
        form="native",
        id="a" * 32 + "-1",
        provider="ragflow",
        title="doc.pdf",
        excerpt="text",
        dataset_name="DS",
        url=None,
        pages=(2, 3),
        truncated=True,
        locators={"dataset_id": "d", "document_id": "doc", "chunk_id": "c"},
    )
    assert pickle.loads(pickle.dumps(evidence)) == evidence  # noqa: S301 - our own bytes
