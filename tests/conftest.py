"""Fixtures shared by every suite: users, a thread, an API client holding a token, retrieval messages."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client

from knowledgeweb.knowledge import RetrievalResult, format_result_view
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.services import message_append, thread_create
from tests.factories import TokenFactory, UserFactory
from tests.tiers import (
    FAST_MARKEXPR,
    POSTGRES_FOLDERS,
    TESTS,
    counted_folder,
    fast_share_report,
    marker_names,
    missing_marker_message,
    tier_of,
    unmarked_tier_files,
)

#: (selected, total) unit and integration tests of this run, once collected
COUNTS = pytest.StashKey[tuple[int, int]]()
#: how many unit and integration tests reported an outcome (in the process that reports them)
RAN = pytest.StashKey[int]()
REPORT = pytest.StashKey[str]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fast",
        action="store_true",
        help="the fast loop (make test-fast): leave out the tier folders' tests and `slow` ones, "
        "print how many unit and integration tests that leaves, and fail below 90%",
    )


def pytest_configure(config: pytest.Config) -> None:
    global _config  # the report hook has no config of its own
    _config = config
    if config.getoption("--fast"):
        chosen = config.option.markexpr
        config.option.markexpr = f"({chosen}) and {FAST_MARKEXPR}" if chosen else FAST_MARKEXPR
    if hasattr(config, "workerinput"):
        return
    # Read every tier file's source before anything runs (in the main process: pytest-xdist's
    # workers collect on their own, where a failure would surface only as a crashed worker).
    missing = unmarked_tier_files()
    if missing:
        raise pytest.UsageError(
            missing_marker_message((str(path.relative_to(TESTS.parent)), marker) for path, marker in missing)
        )


def pytest_collection_finish(session: pytest.Session) -> None:
    """Count the unit and integration tests selected (the total was counted before ``-m``)."""
    selected = sum(counted_folder(Path(str(item.path))) for item in session.items)
    total = session.config.stash.get(COUNTS, (0, 0))[1]
    session.config.stash[COUNTS] = (selected, total)
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # a pytest-xdist worker: its controller prints the counts
        workeroutput["tier_counts"] = [selected, total]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist's controller takes the counts from a worker (each collects the same tests)."""
    counts = getattr(node, "workeroutput", {}).get("tier_counts")
    if counts:
        node.config.stash[COUNTS] = (int(counts[0]), int(counts[1]))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Count each test's one outcome: its call, or its setup when that failed or skipped."""
    if report.when == "call" or (report.when == "setup" and not report.passed):
        path = report.nodeid.split("::")[0]
        if counted_folder(TESTS.parent / path):
            _config.stash[RAN] = _config.stash.get(RAN, 0) + 1


_config: pytest.Config


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """The fast loop fails when it ran less than 90% of the unit and integration tests."""
    config = session.config
    if not config.getoption("--fast") or hasattr(config, "workerinput") or config.option.collectonly:
        return
    ok, line = fast_share_report(*config.stash.get(COUNTS, (0, 0)), config.stash.get(RAN, 0))
    config.stash[REPORT] = line
    if not ok and session.exitstatus in {pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED}:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    line = config.stash.get(REPORT, None)
    if line:
        terminalreporter.write_line(line, bold=True)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Check every tier file's marker, mark the PostgreSQL re-run's suites, and order the run.

    Runs before ``-m`` deselects anything, so a tier file without its marker stops the run
    instead of slipping into the wrong one.
    """
    missing: dict[str, str] = {}
    config.stash[COUNTS] = (0, sum(counted_folder(Path(str(item.path))) for item in items))
    for item in items:
        path = Path(str(item.path))
        tier = tier_of(path)
        module = getattr(item, "module", None)
        if tier is not None and tier not in marker_names(getattr(module, "pytestmark", [])):
            missing[str(path.relative_to(TESTS.parent))] = tier
        if path.is_relative_to(TESTS) and path.relative_to(TESTS).parts[0] in POSTGRES_FOLDERS:
            item.add_marker(pytest.mark.postgres)
    if missing:
        raise pytest.UsageError(missing_marker_message(sorted(missing.items())))
    # Browser tests run last: once Playwright has started, its event loop stays in the main
    # thread for the rest of the session, and only browser tests may make ORM calls beside it.
    items.sort(key=lambda item: item.nodeid.startswith("tests/e2e/"))


@pytest.fixture(scope="session", autouse=True)
def _empty_cache(django_db_setup: None) -> Iterator[None]:
    """Start and end with an empty cache: under ``CACHE_URL=redis://...`` it outlives the run."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _fresh_rate_limits(settings: Any) -> None:
    """Each test counts its rate limits afresh, so no test locks out another (even on a shared Redis)."""
    settings.RATE_LIMIT_NAMESPACE = f"rl-test-{uuid.uuid4().hex}"


@pytest.fixture
def user(db: None) -> User:
    return UserFactory.create(username="alice")  # password: alice-password-1


@pytest.fixture
def other_user(db: None) -> User:
    return UserFactory.create(username="bob")  # password: bob-password-1


@pytest.fixture
def thread(user: User) -> Thread:
    return thread_create(owner=user, title="A thread", agent_name="tester")


@pytest.fixture
def api_token(user: User) -> str:
    """A raw personal API token for ``user``."""
    return TokenFactory.create(user=user, name="tests").raw


@pytest.fixture
def api_client(api_token: str) -> Client:
    """A Django test client that authenticates every request as ``user`` with a bearer token."""
    return Client(HTTP_AUTHORIZATION=f"Bearer {api_token}")


@pytest.fixture
def append_retrieval() -> Callable[..., Message]:
    """Append a real ``format_result`` tool message, as the retrieval service would (trusted)."""

    def append(
        thread: Thread, result: RetrievalResult, *, name: str = "knowledge_search", **format_options: Any
    ) -> Message:
        formatted = format_result_view(result, **format_options)
        return message_append(
            thread=thread,
            type="tool",
            name=name,
            content=formatted.content,
            artifact=formatted.artifact,
            trusted=True,
            tool_view=formatted.view,
        )

    return append
