"""The interop tier's set-up: the cached client environment, and the MCP tier's server helpers.

The real clients (``langchain-mcp-adapters`` with the 1.x MCP SDK, LangGraph, and
``openapi-python-client``) run in their own virtualenv (``tests/interop/installation.py``),
built on first use by the session fixture below and reused offline afterwards. A build that
fails fails the tests that need it: nothing here is skipped.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.interop.installation import Installation, InstallError, prepare
from tests.mcp.conftest import setup, shared_db  # noqa: F401 - fixtures shared with the MCP tier

CLIENTS = Path(__file__).resolve().parent / "clients"
#: Generous: the machine running the suite may be busy, and an agent starts a server.
RUN_TIMEOUT = 300


@pytest.fixture(scope="session")
def interop_env() -> Installation:
    try:
        return prepare()
    except InstallError as error:
        pytest.fail(f"The interop client environment could not be built: {error}")


def run_client(installation: Installation, script: str, spec: dict[str, Any], tmp_path: Path) -> Any:
    """Run ``clients/<script>`` with the environment's Python on ``spec``; its stdout's JSON."""
    spec_file = tmp_path / f"{Path(script).stem}-spec.json"
    spec_file.write_text(json.dumps(spec), encoding="utf-8")
    completed = subprocess.run(  # noqa: S603 - the cached venv's interpreter on our own script
        [str(installation.python), str(CLIENTS / script), str(spec_file)],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    if completed.returncode != 0:
        pytest.fail(f"{script} failed (exit {completed.returncode}):\n{completed.stderr[-4000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])
