"""Every ``manage.py`` and ``curl`` command the README shows works as written on a fresh clone.

The commands are read from README.md itself: every shell code block that holds a
``manage.py`` or ``curl`` command (run in order, as one shell session, so an
``export`` or a ``TOKEN=$(…)`` carries on as it would for a reader), then every row of
the commands table. The clone is the repository's files (tracked, and new ones not
ignored) copied to a new folder, set up as ``make run`` sets it up (``migrate`` and
``demo`` with ``DEBUG=1``, the development server). Placeholders are filled and nothing else is changed: the
server's port for ``127.0.0.1:8000``, a demo thread for ``<uuid>``, a LangGraph state
for ``langgraph-thread-state.json``; in the table's syntax lines, values for
``PATH...``, ``NAME``, ``FILE``, ``USER``, ``ID``, ``QUEUE``, ``H``, ``P`` (each of
``a|b`` in turn), optional ``[…]`` parts left out. ``curl`` runs with ``--fail-with-body``, so
an HTTP error fails the command.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.integration.serving_support import ROOT, base_env, free_port

pytestmark = pytest.mark.slow

README = ROOT / "README.md"
SHELL_FENCES = {"", "sh", "bash", "shell", "console"}
STARTUP = 120


def shell_blocks(markdown: str) -> list[list[str]]:
    """The README's shell code blocks (indented or fenced) holding a manage.py or curl
    command, each as its commands (continuation lines joined)."""
    blocks: list[list[str]] = []
    current: list[str] = []
    fence: str | None = None
    previous_blank = True

    def close() -> None:
        nonlocal current
        commands = _join(current)
        if any("manage.py" in c or c.startswith("curl ") for c in commands):
            blocks.append(commands)
        current = []

    for line in markdown.splitlines():
        if fence is not None:
            if line.strip().startswith("```"):
                if fence in SHELL_FENCES:
                    close()
                current, fence = [], None
            else:
                current.append(line)
            continue
        if line.strip().startswith("```"):
            close()
            fence = line.strip()[3:].strip().lower()
            continue
        if line.startswith("    ") and (current or previous_blank):
            current.append(line[4:])
        elif current and not line.strip():
            current.append("")
        else:
            close()
        previous_blank = not line.strip()
    close()
    return blocks


def _join(lines: list[str]) -> list[str]:
    commands: list[str] = []
    pending = ""
    for line in lines:
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1].rstrip() + " "
            continue
        command = (pending + line.strip()).strip()
        pending = ""
        if command:
            commands.append(command)
    return commands


def table_commands(markdown: str) -> list[str]:
    """The syntax lines of the README's commands table (``| `manage.py …` | does |``)."""
    return re.findall(r"^\| `(manage\.py [^`]+)` \|", markdown, flags=re.MULTILINE)


def fill_syntax(syntax: str, values: dict[str, str]) -> list[str]:
    """A syntax line as commands to run: placeholders filled, optional parts left out."""
    line = re.sub(r"\s*\[[^\]]*\]", "", syntax)
    line = line.replace("\\|", "|")
    alternatives = re.search(r"(\S+)\|(\S+)", line)
    variants = [line]
    if alternatives:
        variants = [line.replace(alternatives.group(0), choice) for choice in alternatives.groups()]
    filled = []
    for variant in variants:
        words = [values.get(word, word) for word in variant.split()]
        filled.append(".venv/bin/python " + " ".join(words))
    return filled


@dataclass
class Clone:
    path: Path
    env: dict[str, str]
    base: str
    thread_id: str


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Clone]:
    """The tracked files in a new folder, set up as `make run` sets it up, its server running."""
    path = tmp_path_factory.mktemp("clone") / "knowledgeweb"
    tracked = subprocess.run(
        # Tracked files and new ones not yet added (what the next commit would hold).
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],  # noqa: S607
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, tracked):
        source = ROOT / name.decode()
        if source.is_file():
            target = path / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    # The virtualenv `make install` would have made: the one running these tests.
    (path / ".venv").symlink_to(Path(sys.prefix))
    env = base_env(DEBUG="1", PYTHONDONTWRITEBYTECODE="1")
    (path / "var").mkdir()
    for step in (["migrate", "--noinput"], ["demo"]):
        done = subprocess.run(  # noqa: S603
            [".venv/bin/python", "manage.py", *step],
            cwd=path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    found = subprocess.run(
        [
            ".venv/bin/python",
            "manage.py",
            "shell",
            "-c",
            "from knowledgeweb.threads.models import Thread\n"
            "print(Thread.objects.filter(owner__username='demo').order_by('created_at').first().id)",
        ],
        cwd=path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert found.returncode == 0, found.stderr
    port = free_port()
    log = path / "runserver.log"
    with log.open("w") as out:
        server = subprocess.Popen(  # noqa: S603
            [".venv/bin/python", "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
            cwd=path,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP
        while True:
            assert server.poll() is None, log.read_text()
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        yield Clone(path=path, env=env, base=base, thread_id=found.stdout.strip().splitlines()[-1])
    finally:
        server.terminate()
        server.wait(timeout=30)


LANGGRAPH_STATE = {
    "values": {
        "messages": [
            {"type": "human", "content": "How are citations verified?"},
            {"type": "ai", "content": "Each citation is checked against the tool output it names."},
        ]
    },
    "next": [],
    "checkpoint": {"thread_id": "t-1", "checkpoint_ns": "", "checkpoint_id": "c-1"},
    "metadata": {},
    "created_at": "2026-01-01T00:00:00+00:00",
}


def _fill_block(command: str, clone: Clone) -> str:
    return command.replace("http://127.0.0.1:8000", clone.base).replace("<uuid>", clone.thread_id)


def _script(commands: list[str]) -> str:
    lines = [
        # An HTTP error fails the command; the body still shows what went wrong.
        'curl() { command curl --fail-with-body -sS "$@"; }',
    ]
    for n, command in enumerate(commands):
        # A newline first: curl's answer may not end with one.
        lines += [f"echo '::command {n}'", command, f"printf '\\n::status {n} %s\\n' \"$?\""]
    return "\n".join(lines) + "\n"


def test_the_readme_shows_the_commands_this_test_runs() -> None:
    text = README.read_text()
    blocks = shell_blocks(text)
    flat = [c for block in blocks for c in block]
    assert any(c.startswith("TOKEN=$(.venv/bin/python manage.py create_token") for c in flat), flat
    assert sum(c.startswith("curl ") for c in flat) >= 3
    assert len(table_commands(text)) >= 8


def test_every_manage_py_and_curl_command_in_the_readme_works_as_written(clone: Clone) -> None:
    text = README.read_text()
    (clone.path / "langgraph-thread-state.json").write_text(json.dumps(LANGGRAPH_STATE))
    commands = [_fill_block(c, clone) for block in shell_blocks(text) for c in block]
    values = {
        "PATH...": "sample_corpus",
        "NAME": "'README trial'",
        "FILE": "langgraph-thread-state.json",
        "USER": "demo",
        "ID": clone.thread_id,
        "QUEUE": "'README queue'",
        "H": "127.0.0.1",
        "P": "0",
    }
    # An admin creates review queues (in the admin); export_reviews needs one to export.
    commands.append(
        '.venv/bin/python manage.py shell -c "from knowledgeweb.review.models import ReviewQueue; '
        "ReviewQueue.objects.get_or_create(name='README queue')\""
    )
    for syntax in table_commands(text):
        for command in fill_syntax(syntax, values):
            if " mcp_server" in command:
                # An MCP host starts it with the token and closes stdin when done.
                command = f'KNOWLEDGEWEB_TOKEN="$TOKEN" {command} < /dev/null'
            elif " mcp_http" in command:
                # A server: it must start and keep serving (stopped after 15 s, status 124).
                command = f"timeout 15 {command} --port 0; test $? -eq 124"
            commands.append(command)
    done = subprocess.run(  # noqa: S603
        ["bash", "-c", _script(commands)],  # noqa: S607
        cwd=clone.path,
        # Not even DEBUG: the README's own commands set what they need.
        env={k: v for k, v in clone.env.items() if k != "DEBUG"},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    statuses = dict(re.findall(r"^::status (\d+) (\d+)$", done.stdout, flags=re.MULTILINE))
    failed = [
        (commands[int(n)], done.stdout, done.stderr[-3000:])
        for n, status in statuses.items()
        if status != "0"
    ]
    assert len(statuses) == len(commands), (done.stdout[-3000:], done.stderr[-3000:])
    assert failed == [], failed[0] if failed else None
