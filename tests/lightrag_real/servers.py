"""The two processes the real-LightRAG tests talk to, started on free loopback ports and stopped by id.

- the stand-in model server (``tests/standins/openai_server.py``), as a child process;
- the real ``lightrag-server`` from the cached virtualenv, single-process, with an API key,
  ``MAX_PARALLEL_INSERT=1`` and ``MAX_ASYNC=1`` (LightRAG's answers are then the same on every
  run, ``created_at`` aside), in a temporary working directory, pointed at the stand-in for
  both its LLM and its embeddings, with the verified tiktoken cache.

Neither inherits this process's environment beyond ``PATH``, ``HOME``, the locale and the
OpenBLAS settings: no provider key or ``.env`` of the developer's leaks into the run.
"""

from __future__ import annotations

import ctypes
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.lightrag_real.installation import Installation

REPOSITORY = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parent / "corpus"
STANDIN_KEY = "standin-model-key-not-secret"
EMBEDDING_DIMENSION = 1024
START_TIMEOUT = 120.0
INDEX_TIMEOUT = 180.0
#: Fixed settings of the server under test; see the module docstring and docs/providers.md.
SERVER_SETTINGS = {
    "MAX_PARALLEL_INSERT": "1",
    "MAX_ASYNC": "1",
    "WORKERS": "1",
    "LLM_BINDING": "openai",
    "LLM_MODEL": "standin-model",
    "EMBEDDING_BINDING": "openai",
    "EMBEDDING_MODEL": "standin-embedding",
    "EMBEDDING_DIM": str(EMBEDDING_DIMENSION),
    "SUMMARY_LANGUAGE": "English",
    "LOG_LEVEL": "WARNING",
    # One chunk per short paragraph or two, so documents span several chunks.
    "CHUNK_SIZE": "60",
    "CHUNK_OVERLAP_SIZE": "10",
    # Hashed bag-of-words vectors of a short question and a chunk share few words:
    # LightRAG's default 0.2 would drop relevant chunks; unrelated texts stay at 0 either way.
    "COSINE_THRESHOLD": "0.1",
    # No rerank model is configured; without this every query logs a warning.
    "RERANK_BY_DEFAULT": "false",
}
_PASSED_THROUGH = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


class ServerError(RuntimeError):
    """A process did not start, answer or index as expected; the message carries its log's tail."""


@dataclass
class Process:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.popen.pid

    def running(self) -> bool:
        return self.popen.poll() is None

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM to this process id (its own process group), SIGKILL after ``timeout``."""
        if not self.running():
            return
        try:
            os.killpg(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.pid, signal.SIGKILL)
            self.popen.wait(timeout=timeout)

    def log_tail(self, lines: int = 25) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


@dataclass
class LightragServer:
    process: Process
    base_url: str
    api_key: str
    workdir: Path
    documents: dict[str, str] = field(default_factory=dict)

    def client(self, *, key: str | None = None, timeout: float = 60.0) -> httpx.Client:
        """A plain client for the test's own look-ups (``/query/data`` as the server answers it)."""
        return httpx.Client(
            base_url=self.base_url,
            headers={"X-API-Key": key or self.api_key},
            timeout=timeout,
            trust_env=False,
        )

    def query_data(self, query: str, mode: str, **options: Any) -> dict[str, Any]:
        with self.client() as client:
            response = client.post("/query/data", json={"query": query, "mode": mode, **options})
        body: dict[str, Any] = response.json()
        return body


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _environment(extra: Mapping[str, str]) -> dict[str, str]:
    env = {name: os.environ[name] for name in _PASSED_THROUGH if name in os.environ}
    env.update(extra)
    return env


def _die_with_parent() -> None:
    """In the child, before exec: Linux sends SIGTERM when the test run dies without cleaning up."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the fixture's own stop still applies


def _spawn(name: str, command: Sequence[str], *, cwd: Path, env: Mapping[str, str], log: Path) -> Process:
    with log.open("ab") as output:
        popen = subprocess.Popen(  # noqa: S603 - our stand-in and the cached lightrag-server
            list(command),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if name == "standin" else output,
            stderr=output,
            # Its own process group: stopping it by id also stops any child it made.
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
    return Process(name=name, popen=popen, log=log)


STANDIN_OPTIONS = ("--port", "0", "--dimension", str(EMBEDDING_DIMENSION))


def start_standin(workdir: Path) -> tuple[Process, str]:
    """The stand-in model server on a free port; returns it and its ``/v1`` base URL."""
    process = _spawn(
        "standin",
        [sys.executable, "-m", "tests.standins.openai_server", *STANDIN_OPTIONS],
        cwd=REPOSITORY,
        env=_environment({"STANDIN_OPENAI_API_KEY": STANDIN_KEY, "PYTHONPATH": str(REPOSITORY)}),
        log=workdir / "standin.log",
    )
    assert process.popen.stdout is not None
    lines: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=lambda: lines.put(process.popen.stdout.readline()), daemon=True).start()  # type: ignore[union-attr]
    try:
        first = lines.get(timeout=30).decode().strip()
    except queue.Empty:
        first = ""
    if not first.startswith("listening on http://"):
        process.stop()
        raise ServerError(f"The stand-in model server did not start:\n{process.log_tail()}")
    return process, first.removeprefix("listening on ") + "/v1"


def start_lightrag(
    installation: Installation, workdir: Path, *, model_url: str, api_key: str, port: int | None = None
) -> LightragServer:
    """``lightrag-server`` on a free loopback port; returns once ``/health`` answers."""
    port = port or free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    env = _environment(
        {
            **SERVER_SETTINGS,
            "HOST": "127.0.0.1",
            "PORT": str(port),
            "WORKING_DIR": str(workdir / "rag_storage"),
            "INPUT_DIR": str(workdir / "inputs"),
            "LIGHTRAG_API_KEY": api_key,
            "LLM_BINDING_HOST": model_url,
            "LLM_BINDING_API_KEY": STANDIN_KEY,
            "EMBEDDING_BINDING_HOST": model_url,
            "EMBEDDING_BINDING_API_KEY": STANDIN_KEY,
            "TIKTOKEN_CACHE_DIR": str(installation.tiktoken_cache),
        }
    )
    # The working directory is the temporary one: lightrag-server reads a ``.env`` from it.
    process = _spawn(
        "lightrag", [str(installation.server)], cwd=workdir, env=env, log=workdir / "lightrag.log"
    )
    server = LightragServer(
        process=process, base_url=f"http://127.0.0.1:{port}", api_key=api_key, workdir=workdir
    )
    deadline = time.monotonic() + START_TIMEOUT
    with httpx.Client(base_url=server.base_url, timeout=5, trust_env=False) as client:
        while time.monotonic() < deadline:
            if not process.running():
                raise ServerError(
                    f"lightrag-server exited with code {process.popen.returncode} while starting:\n"
                    f"{process.log_tail()}"
                )
            try:
                if client.get("/health").status_code == 200:
                    return server
            except httpx.TransportError:
                pass
            time.sleep(0.3)
    process.stop()
    raise ServerError(
        f"lightrag-server did not answer /health within {START_TIMEOUT:g} s:\n{process.log_tail()}"
    )


def corpus() -> dict[str, str]:
    """``file name -> text`` of the project's own test corpus, in name order."""
    return {path.name: path.read_text() for path in sorted(CORPUS.iterdir()) if path.is_file()}


def insert_corpus(server: LightragServer, documents: Mapping[str, str]) -> None:
    """``POST /documents/texts``, then wait until every document is processed (or fail clearly)."""
    names = list(documents)
    with server.client() as client:
        response = client.post(
            "/documents/texts", json={"texts": [documents[n] for n in names], "file_sources": names}
        )
        if response.status_code != 200:
            raise ServerError(f"POST /documents/texts answered {response.status_code}: {response.text[:500]}")
        track_id = response.json().get("track_id")
        deadline = time.monotonic() + INDEX_TIMEOUT
        statuses: dict[str, str] = {}
        while time.monotonic() < deadline:
            track = client.get(f"/documents/track_status/{track_id}").json()
            statuses = {doc.get("file_path"): str(doc.get("status")) for doc in track.get("documents", [])}
            failed = {path: status for path, status in statuses.items() if status.lower() == "failed"}
            if failed:
                raise ServerError(
                    f"LightRAG failed to index {sorted(failed)}: {json.dumps(track)[:1500]}\n"
                    f"{server.process.log_tail()}"
                )
            if len(statuses) == len(names) and all(s.lower() == "processed" for s in statuses.values()):
                busy = client.get("/documents/pipeline_status").json().get("busy")
                if not busy:
                    server.documents = dict(documents)
                    return
            time.sleep(0.3)
    raise ServerError(
        f"LightRAG did not finish indexing within {INDEX_TIMEOUT:g} s (statuses: {statuses}).\n"
        f"{server.process.log_tail()}"
    )
