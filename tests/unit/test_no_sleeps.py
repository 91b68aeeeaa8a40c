"""No test sleeps and then asserts that something did not happen.

A sleep before a negative assertion passes when the bug shows up late; the tests wait for the
event that would show the bug, or for a positive sign that the page settled. This reads every
test module's syntax tree and allows a sleep only where it cannot be that:

- the browser tests (tests/e2e) never sleep: Playwright's ``expect`` waits for a condition;
- elsewhere a sleep sits in a ``while`` loop, a poll for a condition (bounded by a deadline);
- the stand-in servers (tests/standins, tests/local_servers.py) are exempt: their delays
  are the slow provider the tests wait on.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.tiers import TESTS

SLEEPS = {"sleep", "wait_for_timeout"}
STAND_INS = ("standins/", "local_servers.py")


def _name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def sleeps_out_of_place(source: str, *, browser: bool) -> list[int]:
    """The line numbers of the sleeps ``source`` may not have (see the module's docstring)."""
    found: list[int] = []

    def visit(node: ast.AST, in_while: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Call) and _name(child) in SLEEPS and (browser or not in_while):
                found.append(child.lineno)
            # A function defined in a loop is not run by it.
            inner = isinstance(child, ast.While) or (
                in_while and not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            )
            visit(child, inner)

    visit(ast.parse(source), False)
    return sorted(found)


def _modules() -> list[Path]:
    return [
        path
        for path in sorted(TESTS.rglob("*.py"))
        if not path.relative_to(TESTS).as_posix().startswith(STAND_INS)
    ]


def test_no_test_module_sleeps_outside_a_poll_and_the_browser_tests_never_do() -> None:
    offenders = {
        path.relative_to(TESTS.parent).as_posix(): lines
        for path in _modules()
        if (lines := sleeps_out_of_place(path.read_text(), browser=path.relative_to(TESTS).parts[0] == "e2e"))
    }
    assert offenders == {}


@pytest.mark.parametrize(
    ("source", "browser", "lines"),
    [
        # The pattern this guards against, in both spellings.
        ("page.wait_for_timeout(300)\nexpect(preview).to_be_hidden()\n", True, [1]),
        ("import time\ntime.sleep(1.5)\nassert not sent\n", False, [2]),
        ("from time import sleep\nsleep(0.2)\nassert calls == 0\n", False, [2]),
        ("async def f():\n    await asyncio.sleep(1)\n", False, [2]),
        # A poll for a condition is allowed outside the browser tests...
        ("while not ready():\n    time.sleep(0.05)\n", False, []),
        ("while True:\n    if done():\n        break\n    time.sleep(0.5)\n", False, []),
        # ...but not inside them, and not from a function that a loop merely defines.
        ("while not ready():\n    page.wait_for_timeout(50)\n", True, [2]),
        ("while True:\n    def f():\n        time.sleep(1)\n    break\n", False, [3]),
        ("for _ in range(3):\n    time.sleep(1)\n", False, [2]),
        # Words are not calls.
        ("text = 'Bees sleep in winter'\n", False, []),
    ],
)
def test_the_guard_finds_sleeps_and_allows_polls(source: str, browser: bool, lines: list[int]) -> None:
    assert sleeps_out_of_place(source, browser=browser) == lines
