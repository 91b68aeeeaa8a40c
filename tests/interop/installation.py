"""The client libraries the interop tests run: one virtualenv, built once and cached.

``langchain-mcp-adapters`` 0.3.x needs the 1.x MCP SDK while the app pins 2.x, so the real
clients cannot live in the project's own virtualenv. They get one of their own, in a cache
directory OUTSIDE the repository that every later run (and CI on the same machine) reuses:

- ``$KNOWLEDGEWEB_INTEROP_CACHE`` when set, else ``$XDG_CACHE_HOME/knowledgeweb/interop-<tag>``,
  else ``~/.cache/knowledgeweb/interop-<tag>``, where ``<tag>`` names the pinned set below, so a
  change of pins builds a new environment beside the old one;
- ``venv/``: ``pip install`` of the pins in :data:`REQUIREMENTS` (PyPI, once).

Once built nothing here touches the network. Build it ahead with
``.venv/bin/python -m tests.interop.installation`` (``make interop-cache``); the tests' session
fixture does the same on first use. A failed build raises :class:`InstallError`, which the
fixture turns into a test failure (never a skip).
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from tests.cached_venv import CachedVenv, building, pip_install
from tests.cached_venv import InstallError as InstallError
from tests.cached_venv import cache_root as cached_root

#: The real clients, pinned. ``mcp`` 1.x is what langchain-mcp-adapters 0.3.x accepts.
REQUIREMENTS = (
    "langchain-mcp-adapters==0.3.2",
    "mcp==1.30.0",
    "langchain-core==1.8.1",
    "langgraph==1.2.22",
    "openapi-python-client==0.29.1",
)
TAG = hashlib.sha256("\n".join(REQUIREMENTS).encode()).hexdigest()[:12]
CACHE_ENV = "KNOWLEDGEWEB_INTEROP_CACHE"
_READY = ".knowledgeweb-ready"


class Installation(CachedVenv):
    """The cache directory and what is built in it."""

    @property
    def generator(self) -> Path:
        return self.venv / "bin" / "openapi-python-client"


def cache_root() -> Path:
    """Where the environment lives (see the module docstring)."""
    return cached_root(CACHE_ENV, f"interop-{TAG}")


def prepare(root: Path | None = None) -> Installation:
    """The ready environment, built on first use; raise ``InstallError`` when it cannot be."""
    installation = Installation(root or cache_root())
    with building(installation.root, "interop"):
        _ensure_venv(installation)
    return installation


def _ensure_venv(installation: Installation) -> None:
    wanted = "\n".join(REQUIREMENTS)
    marker = installation.venv / _READY
    if marker.is_file() and marker.read_text() == wanted and installation.python.is_file():
        return
    pip_install(
        installation.venv,
        REQUIREMENTS,
        log=installation.root / "install.log",
        what="pip install the interop clients",
    )
    found = installed_versions(installation)
    expected = dict(requirement.split("==") for requirement in REQUIREMENTS)
    if found != expected:
        raise InstallError(
            f"The interop virtualenv at {installation.venv} holds {found}, not {expected}. "
            "Delete that directory and run again."
        )
    marker.write_text(wanted)


def installed_versions(installation: Installation) -> dict[str, str]:
    """The versions of the pinned packages as the environment's own Python reports them."""
    names = [requirement.split("==")[0] for requirement in REQUIREMENTS]
    script = "import importlib.metadata as m, sys\nfor n in sys.argv[1:]: print(n, m.version(n))"
    completed = subprocess.run(  # noqa: S603 - the cached venv's own interpreter, fixed arguments
        [str(installation.python), "-c", script, *names],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return dict(line.split(" ", 1) for line in completed.stdout.splitlines() if " " in line)


if __name__ == "__main__":
    try:
        ready = prepare()
    except InstallError as error:
        sys.exit(f"interop test cache: {error}")
    sys.stdout.write(f"interop clients test cache ready at {ready.root}\n")
