"""Cached virtualenvs for the test tiers whose real clients or servers cannot live in the
project's own virtualenv (the real LightRAG server, the interop clients).

Each lives in a cache directory OUTSIDE the repository, reused by every later run: the
directory named by its own environment variable when set, else
``$XDG_CACHE_HOME/knowledgeweb/<name>``, else ``~/.cache/knowledgeweb/<name>``. A build holds
a file lock, so runs started at once on one machine build once. A failed build raises
:class:`InstallError`, which the tiers' fixtures turn into a test failure (never a skip).
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

PIP_TIMEOUT_SECONDS = 1200


class InstallError(RuntimeError):
    """The environment could not be built or verified; the message says what to do."""


@dataclass(frozen=True)
class CachedVenv:
    """A cache directory holding a virtualenv in ``venv/`` (and whatever else a tier keeps)."""

    root: Path

    @property
    def venv(self) -> Path:
        return self.root / "venv"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"


def cache_root(env: str, name: str) -> Path:
    """``$env`` when set, else ``<XDG cache>/knowledgeweb/<name>``."""
    configured = os.environ.get(env, "").strip()
    if configured:
        return Path(configured).expanduser().resolve()
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base).expanduser().resolve() / "knowledgeweb" / name


@contextmanager
def building(root: Path, what: str) -> Iterator[None]:
    """Create ``root`` and hold its lock while a run builds or checks what is in it."""
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InstallError(f"Cannot create the {what} cache directory {root}: {exc}.") from None
    with (root / ".lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def pip_install(venv: Path, packages: Sequence[str], *, log: Path, what: str) -> None:
    """Create ``venv`` when it does not exist, and ``pip install`` ``packages`` into it."""
    python = venv / "bin" / "python"
    # This interpreter's pip installs into the new virtualenv (``pip --python``), which spares
    # the seconds ``ensurepip`` takes.
    outer_pip = importlib.util.find_spec("pip") is not None
    if not python.is_file():
        base = getattr(sys, "_base_executable", None) or sys.executable
        without_pip = ["--without-pip"] if outer_pip else []
        run([base, "-m", "venv", *without_pip, str(venv)], log=log, timeout=300, what="create the virtualenv")
    pip = [sys.executable, "-m", "pip", "--python", str(python)] if outer_pip else [str(python), "-m", "pip"]
    run(
        [*pip, "install", "--disable-pip-version-check", *packages],
        log=log,
        timeout=PIP_TIMEOUT_SECONDS,
        what=f"{what} (this needs PyPI once; later runs are offline)",
    )


def run(command: list[str], *, log: Path, timeout: int, what: str) -> None:
    """Run an install step with its output in ``log``; raise ``InstallError`` saying what failed."""
    with log.open("a") as output:
        output.write(f"$ {' '.join(command)}\n")
        output.flush()
        try:
            completed = subprocess.run(  # noqa: S603 - venv, pip and npm with fixed arguments
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
