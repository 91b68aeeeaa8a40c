"""Playwright against ``live_server`` with Debian's Chromium.

Playwright's sync API runs an event loop in the test thread, which makes Django
refuse ORM calls there; the opt-out lives here and nowhere else.

One UI login per session: the first test that needs a reader logs in through
the login page and keeps the browser's storage state. ``live_server`` flushes
the database after every test, so later tests put back the same user row and
session row and plant the saved cookies instead of logging in again.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Error, Page, expect

from tests.e2e.watching import Watched

CHROMIUM = "/usr/bin/chromium"
USERNAME = "reader"
PASSWORD = "a-long-reader-passphrase-1"

expect.set_options(timeout=10_000)


@pytest.fixture(scope="package", autouse=True)
def _orm_beside_playwrights_event_loop() -> Iterator[None]:
    """Playwright's sync API keeps an event loop running in the test thread, where Django then
    refuses ORM calls; the browser tests (and only they: the suite runs them last, see
    tests/conftest.py) opt out, from their first fixture to their last teardown."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


@pytest.fixture(scope="session")
def browser_type_launch_args() -> dict[str, Any]:
    executable = shutil.which("chromium") or CHROMIUM
    return {
        "executable_path": executable,
        "headless": True,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ],
    }


@dataclass
class SavedLogin:
    storage_state: Any
    user: dict[str, Any]
    session: dict[str, Any]


@pytest.fixture(scope="session")
def _saved_login() -> dict[str, SavedLogin]:
    return {}


@pytest.fixture
def reader(live_server: Any, browser: Browser, _saved_login: dict[str, SavedLogin]) -> tuple[User, Any]:
    """The logged-in reader and the storage state that carries their session."""
    saved = _saved_login.get("login")
    if saved is None:
        saved = _login_through_the_ui(live_server.url, browser)
        _saved_login["login"] = saved
    else:
        User.objects.update_or_create(pk=saved.user["pk"], defaults=saved.user["fields"])
        Session.objects.update_or_create(session_key=saved.session["session_key"], defaults=saved.session)
    return User.objects.get(pk=saved.user["pk"]), saved.storage_state


def _login_through_the_ui(base_url: str, browser: Browser) -> SavedLogin:
    user = User.objects.create_user(USERNAME, password=PASSWORD)
    context = browser.new_context(base_url=base_url)
    page = context.new_page()
    page.goto("/accounts/login/")
    page.locator('[data-form="login"] input[name="username"]').fill(USERNAME)
    page.locator('[data-form="login"] input[name="password"]').fill(PASSWORD)
    page.locator('[data-action="login"]').click()
    expect(page.locator('[data-empty="threads"]')).to_be_visible()
    state = context.storage_state()
    context.close()
    session_key = next(c["value"] for c in state["cookies"] if c["name"] == "sessionid")
    session = Session.objects.get(session_key=session_key)
    return SavedLogin(
        storage_state=state,
        user={"pk": user.pk, "fields": {"username": user.username, "password": user.password}},
        session={
            "session_key": session.session_key,
            "session_data": session.session_data,
            "expire_date": session.expire_date,
        },
    )


@pytest.fixture
def open_page(
    live_server: Any, reader: tuple[User, Any], new_context: Callable[..., BrowserContext]
) -> Callable[..., tuple[Page, Watched]]:
    """Open a page as the reader, recording dialogs and errors from the first byte."""

    def _open(path: str, *, javascript: bool = True, **options: Any) -> tuple[Page, Watched]:
        context = new_context(
            base_url=live_server.url, storage_state=reader[1], java_script_enabled=javascript, **options
        )
        page = context.new_page()
        watched = Watched(dialogs=[], errors=[])

        def on_dialog(dialog: Any) -> None:
            watched.dialogs.append(f"{dialog.type}: {dialog.message}")
            dialog.dismiss()

        def on_console(message: ConsoleMessage) -> None:
            if message.type == "error":
                watched.errors.append(message.text)

        def on_error(error: Error) -> None:
            watched.errors.append(str(error))

        page.on("dialog", on_dialog)
        page.on("console", on_console)
        page.on("pageerror", on_error)
        page.goto(path)
        return page, watched

    return _open
