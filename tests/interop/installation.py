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

import fcntl
import hashlib
import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

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
PIP_TIMEOUT_SECONDS = 1200
_READY = ".knowledgeweb-ready"


class InstallError(RuntimeError):
    """The environment could not be built or verified; the message says what to do."""


@dataclass(frozen=True)
class Installation:
    root: Path

    @property
    def venv(self) -> Path:
        return self.root / "venv"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def generator(self) -> Path:
        return self.venv / "bin" / "openapi-python-client"


def cache_root() -> Path:
    """Where the environment lives (see the module docstring)."""
    configured = os.environ.get(CACHE_ENV, "").strip()
    if configured:
        return Path(configured).expanduser().resolve()
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base).expanduser().resolve() / "knowledgeweb" / f"interop-{TAG}"


def prepare(root: Path | None = None) -> Installation:
    """The ready environment, built on first use; raise ``InstallError`` when it cannot be."""
    installation = Installation(root or cache_root())
    try:
        installation.root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InstallError(f"Cannot create the interop cache directory {installation.root}: {exc}.") from None
    # Several test runs may start at once on one machine: one builds, the others wait.
    with _locked(installation.root / ".lock"):
        _ensure_venv(installation)
    return installation


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _ensure_venv(installation: Installation) -> None:
    wanted = "\n".join(REQUIREMENTS)
    marker = installation.venv / _READY
    if marker.is_file() and marker.read_text() == wanted and installation.python.is_file():
        return
    log = installation.root / "install.log"
    # This interpreter's pip installs into the new virtualenv (``pip --python``), which spares
    # the seconds ``ensurepip`` takes.
    outer_pip = importlib.util.find_spec("pip") is not None
    if not installation.python.is_file():
        base = getattr(sys, "_base_executable", None) or sys.executable
        without_pip = ["--without-pip"] if outer_pip else []
        _run(
            [base, "-m", "venv", *without_pip, str(installation.venv)],
            log=log,
            timeout=300,
            what="create the virtualenv",
        )
    pip = [sys.executable, "-m", "pip", "--python", str(installation.python)]
    if not outer_pip:
        pip = [str(installation.python), "-m", "pip"]
    _run(
        [*pip, "install", "--disable-pip-version-check", *REQUIREMENTS],
        log=log,
        timeout=PIP_TIMEOUT_SECONDS,
        what="pip install the interop clients (this needs PyPI once; later runs are offline)",
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


def _run(command: list[str], *, log: Path, timeout: int, what: str) -> None:
    with log.open("a") as output:
        output.write(f"$ {' '.join(command)}\n")
        output.flush()
        try:
            completed = subprocess.run(  # noqa: S603 - venv and pip with fixed arguments
                command, stdout=output, stderr=subprocess.STDOUT, timeout=timeout, check=False
            )
        except FileNotFoundError:
            raise InstallError(f"Could not {what}: {command[0]} is not installed.") from None
        except subprocess.TimeoutExpired:
            raise InstallError(f"Could not {what}: it took more than {timeout} s. See {log}.") from None
    if completed.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        raise InstallError(
            f"Could not {what} (exit {completed.returncode}). Is the package registry reachable? "
            f"Last lines of {log}:\n{tail}"
        )


if __name__ == "__main__":
    try:
        ready = prepare()
    except InstallError as error:
        sys.exit(f"interop test cache: {error}")
    sys.stdout.write(f"interop clients test cache ready at {ready.root}\n")
