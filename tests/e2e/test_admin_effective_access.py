"""The agent-name trap in a real browser: the admin sees "browser ✗" before saving, chooses browser
use, and the user's Ask then lists the binding."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.contrib.auth.models import User
from playwright.sync_api import BrowserContext, ConsoleMessage, Page, expect

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.library.services import ChunkDraft, collection_get_or_create, document_ingest
from tests.e2e.watching import Watched

pytestmark = pytest.mark.e2e

OpenPage = Callable[..., tuple[Page, Watched]]
ADMIN = "root"
ADMIN_PASSWORD = "a-long-admin-passphrase-1"


def admin_page(live_server: Any, new_context: Callable[..., BrowserContext]) -> tuple[Page, list[str]]:
    User.objects.create_superuser(ADMIN, password=ADMIN_PASSWORD)
    page = new_context(base_url=live_server.url).new_page()
    errors: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        # A missing resource is caught by its response below; Chromium's favicon request,
        # which pages do not see, would otherwise count as one.
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            errors.append(message.text)

    page.on("console", on_console)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on(
        "response",
        lambda response: (
            errors.append(f"{response.status} {response.url}") if response.status >= 400 else None
        ),
    )
    page.goto("/admin/login/?next=/admin/")
    page.locator("#id_username").fill(ADMIN)
    page.locator("#id_password").fill(ADMIN_PASSWORD)
    page.locator('input[type="submit"]').click()
    expect(page.locator("#user-tools")).to_contain_text(ADMIN)
    return page, errors


def test_the_admin_sees_browser_access_before_saving_and_the_user_then_finds_the_binding(
    live_server: Any,
    reader: tuple[User, Any],
    new_context: Callable[..., BrowserContext],
    open_page: OpenPage,
) -> None:
    document_ingest(
        collection=collection_get_or_create(name="Manuals"),
        source_key="guide.txt",
        content_hash="h",
        title="Guide",
        source_url="",
        chunks=[ChunkDraft("The ferry leaves at noon.")],
    )
    user = reader[0]
    page, errors = admin_page(live_server, new_context)
    page.goto("/admin/bindings/knowledgebinding/add/")
    lines = page.locator("[data-access-lines] li")
    expect(lines).to_have_text(["No users are chosen: nobody can use this binding."])

    page.locator("#id_name").fill("manuals")
    page.locator("#id_provider").select_option("lightrag")
    expect(page.locator(".form-row.field-base_url")).to_be_visible()
    expect(page.locator(".form-row.field-query_modes")).to_be_visible()
    expect(page.locator(".form-row.field-collections")).to_be_hidden()
    page.locator("#id_provider").select_option("local")
    # Fields that do not apply to the local index are hidden; its own are shown.
    expect(page.locator(".form-row.field-base_url")).to_be_hidden()
    expect(page.locator(".form-row.field-selection")).to_be_hidden()
    expect(page.locator(".form-row.field-collections")).to_be_visible()
    expect(page.locator('input[name="tools"][value="entity_relations_search"]')).to_be_hidden()
    expect(page.locator("fieldset:has(.field-query_modes)")).to_be_hidden()
    page.locator('input[name="tools"][value="knowledge_search"]').check()
    page.locator("#id_users_from").select_option(label=user.username)
    page.locator("#id_users_add").click()
    expect(lines).to_have_text([f"{user.username}: browser ✓ · any agent name ✓"])

    page.locator("#id_agent_names").fill("lead_agent")
    expect(lines).to_have_text([f"{user.username}: browser ✗ (agent names are set) · agent lead_agent ✓"])

    # Without JavaScript's help the server says the same after a preview round trip.
    page.locator('[data-action="preview-access"]').click()
    expect(page.locator('[data-notice="preview"]')).to_be_visible()
    expect(lines).to_have_text([f"{user.username}: browser ✗ (agent names are set) · agent lead_agent ✓"])
    assert KnowledgeBinding.objects.count() == 0
    # What this page adds (the summary, the connection test, the notice) brings no axe finding
    # beyond the one Django's own form has (docs/operations.md#accessibility).
    assert errors == []
    found = {violation["id"] for violation in Axe().run(page).response["violations"]}
    assert found <= {"aria-prohibited-attr"}, found
    errors.clear()  # axe's own injected styles are refused by the CSP, as they should be

    page.locator("#id_browser_use").check()
    expect(lines).to_have_text([f"{user.username}: browser ✓ · agent lead_agent ✓"])
    page.locator('input[name="_save"]').first.click()
    expect(page.locator(".messagelist")).to_contain_text("was added successfully")
    expect(page.locator("td.field-serves")).to_have_text("1 user · agent lead_agent · browser ✓")
    assert errors == []

    ask, watched = open_page("/ask/")
    expect(ask.locator('input[data-field="binding"][value="manuals"]')).to_have_count(1)
    assert watched.errors == []


def test_without_browser_use_the_users_ask_does_not_list_the_binding(
    live_server: Any,
    reader: tuple[User, Any],
    new_context: Callable[..., BrowserContext],
    open_page: OpenPage,
) -> None:
    document_ingest(
        collection=collection_get_or_create(name="Manuals"),
        source_key="guide.txt",
        content_hash="h",
        title="Guide",
        source_url="",
        chunks=[ChunkDraft("The ferry leaves at noon.")],
    )
    user = reader[0]
    page, errors = admin_page(live_server, new_context)
    page.goto("/admin/bindings/knowledgebinding/add/")
    page.locator("#id_name").fill("manuals")
    page.locator("#id_provider").select_option("local")
    page.locator('input[name="tools"][value="knowledge_search"]').check()
    page.locator("#id_users_from").select_option(label=user.username)
    page.locator("#id_users_add").click()
    page.locator("#id_agent_names").fill("lead_agent")
    page.locator('input[name="_save"]').first.click()
    expect(page.locator("td.field-serves")).to_have_text("1 user · agent lead_agent · browser ✗")
    assert errors == []

    ask, _ = open_page("/ask/")
    expect(ask.locator('[data-ask-error="no-bindings"]')).to_be_visible()
    expect(ask.locator('input[data-field="binding"]')).to_have_count(0)


def test_the_answer_model_form_says_the_same_as_the_admin_edits(
    live_server: Any, reader: tuple[User, Any], new_context: Callable[..., BrowserContext]
) -> None:
    user = reader[0]
    page, errors = admin_page(live_server, new_context)
    page.goto("/admin/composer/answermodel/add/")
    lines = page.locator("[data-access-lines] li")
    page.locator("#id_users_from").select_option(label=user.username)
    page.locator("#id_users_add").click()
    page.locator("#id_agent_names").fill("lead_agent\nresearcher")
    expect(lines).to_have_text(
        [f"{user.username}: browser ✗ (agent names are set) · agents lead_agent, researcher ✓"]
    )
    page.locator("#id_browser_use").check()
    expect(lines).to_have_text([f"{user.username}: browser ✓ · agents lead_agent, researcher ✓"])
    page.locator("#id_enabled").uncheck()
    expect(lines).to_have_text(
        [
            "Disabled: nobody can use this answer model until it is enabled.",
            f"{user.username}: browser ✓ · agents lead_agent, researcher ✓",
        ]
    )
    assert errors == []
