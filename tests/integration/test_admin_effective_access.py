"""Effective access said before saving: the agent-name trap, browser use, the summary and the list columns."""

from __future__ import annotations

import html
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.bindings.access import access_summary, agent_may_use
from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.composer.models import AnswerModel
from knowledgeweb.composer.selectors import answer_models_for
from knowledgeweb.library.services import ChunkDraft, collection_get_or_create, document_ingest
from knowledgeweb.retrieval.capabilities import retrieval_capabilities

pytestmark = pytest.mark.django_db

ADD = "/admin/bindings/knowledgebinding/add/"
MODEL_ADD = "/admin/composer/answermodel/add/"
TRAP = "reviewer1: browser ✗ (agent names are set) · agent lead_agent ✓"


@pytest.fixture
def reviewers(db: None) -> list[User]:
    return [User.objects.create_user(name, password=f"{name}-password-1") for name in ("reviewer1", "demo")]


@pytest.fixture
def a_document(db: None) -> None:
    document_ingest(
        collection=collection_get_or_create(name="Manuals"),
        source_key="guide.txt",
        content_hash="h",
        title="Guide",
        source_url="",
        chunks=[ChunkDraft("The ferry leaves at noon.")],
    )


def local_form(users: list[User], **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "manuals",
        "provider": "local",
        "enabled": "on",
        "users": [str(u.pk) for u in users],
        "agent_names": "lead_agent",
        "tools": ["knowledge_search"],
        "top_k": "20",
        "timeout": "30",
        "scope": "all",
    }
    data.update(changes)
    return data


def page_text(response: Any) -> str:
    return html.unescape(response.content.decode())


def summary_lines(page: str) -> list[str]:
    start = page.index("data-access-lines")
    block = page[start : page.index("</ul>", start)]
    return [item.split("</li>")[0] for item in block.split("<li>")[1:]]


def test_the_agent_name_trap_is_said_before_saving(
    admin_client: Client, reviewers: list[User], a_document: None
) -> None:
    response = admin_client.post(ADD, local_form(reviewers, _preview="1"))

    assert response.status_code == 200
    page = page_text(response)
    assert summary_lines(page) == ["demo: browser ✗ (agent names are set) · agent lead_agent ✓", TRAP]
    assert "Preview only: nothing was saved." in page
    assert "Please correct the error" not in page
    assert KnowledgeBinding.objects.count() == 0


def test_the_form_shows_the_summary_of_what_is_stored_before_any_edit(
    admin_client: Client, reviewers: list[User]
) -> None:
    binding = binding_create(
        name="manuals",
        provider="local",
        tools=["knowledge_search"],
        users=reviewers,
        agent_names=["lead_agent"],
    )
    page = page_text(admin_client.get(f"/admin/bindings/knowledgebinding/{binding.pk}/change/"))
    assert TRAP in summary_lines(page)


def test_saved_with_agent_names_the_user_cannot_use_it_in_the_browser_and_the_change_page_says_so(
    admin_client: Client, reviewers: list[User], a_document: None
) -> None:
    response = admin_client.post(ADD, local_form(reviewers))
    assert response.status_code == 302, page_text(response)[:3000]
    binding = KnowledgeBinding.objects.get()
    assert binding.browser_use is False

    assert retrieval_capabilities(user=reviewers[0], agent_name="") == []
    assert [c.binding for c in retrieval_capabilities(user=reviewers[0], agent_name="lead_agent")] == [
        "manuals"
    ]
    change = page_text(admin_client.get(f"/admin/bindings/knowledgebinding/{binding.pk}/change/"))
    assert TRAP in summary_lines(change)


def test_choosing_browser_use_lets_the_browser_in_and_keeps_other_agents_out(
    admin_client: Client, reviewers: list[User], a_document: None
) -> None:
    preview = page_text(admin_client.post(ADD, local_form(reviewers, browser_use="on", _preview="1")))
    assert "reviewer1: browser ✓ · agent lead_agent ✓" in summary_lines(preview)

    response = admin_client.post(ADD, local_form(reviewers, browser_use="on"))
    assert response.status_code == 302
    assert KnowledgeBinding.objects.get().browser_use is True

    reviewer = reviewers[0]
    assert [c.binding for c in retrieval_capabilities(user=reviewer, agent_name="")] == ["manuals"]
    assert [c.binding for c in retrieval_capabilities(user=reviewer, agent_name="lead_agent")] == ["manuals"]
    assert retrieval_capabilities(user=reviewer, agent_name="researcher") == []
    ask = Client()
    ask.force_login(reviewer)
    assert 'value="manuals"' in ask.get("/ask/").content.decode()


def test_without_agent_names_everyone_chosen_can_use_it_everywhere() -> None:
    summary = access_summary(
        usernames=["b", "A"], agent_names=[], browser_use=False, enabled=True, what="binding"
    )
    assert summary.lines == ["A: browser ✓ · any agent name ✓", "b: browser ✓ · any agent name ✓"]
    assert agent_may_use(agent_names=[], browser_use=False, agent_name="anything")


def test_nobody_and_disabled_are_said_instead_of_users() -> None:
    summary = access_summary(
        usernames=[], agent_names=["x"], browser_use=False, enabled=False, what="answer model"
    )
    assert summary.lines == [
        "Disabled: nobody can use this answer model until it is enabled.",
        "No users are chosen: nobody can use this answer model.",
    ]


def test_malformed_stored_agent_names_let_nobody_in() -> None:
    assert not agent_may_use(agent_names="lead_agent", browser_use=True, agent_name="")


def test_an_answer_model_with_agent_names_can_be_usable_in_the_browser(
    admin_client: Client, reviewers: list[User]
) -> None:
    form = {
        "name": "ollama",
        "enabled": "on",
        "base_url": "http://127.0.0.1:11434/v1",
        "model": "llama3.1:8b",
        "api_key_env": "",
        "temperature": "0.2",
        "max_output_tokens": "1024",
        "context_budget": "24000",
        "timeout": "60",
        "users": [str(reviewers[0].pk)],
        "agent_names": "lead_agent",
    }
    preview = page_text(admin_client.post(MODEL_ADD, {**form, "_preview": "1"}))
    assert summary_lines(preview) == [TRAP]
    assert AnswerModel.objects.count() == 0

    assert admin_client.post(MODEL_ADD, form).status_code == 302
    assert answer_models_for(user=reviewers[0], agent_name="") == []
    AnswerModel.objects.all().delete()

    assert admin_client.post(MODEL_ADD, {**form, "browser_use": "on"}).status_code == 302
    assert [m.name for m in answer_models_for(user=reviewers[0], agent_name="")] == ["ollama"]
    assert answer_models_for(user=reviewers[0], agent_name="researcher") == []


def test_the_list_pages_say_whom_each_serves_and_how_many_documents(
    admin_client: Client, reviewers: list[User], a_document: None
) -> None:
    binding_create(
        name="manuals",
        provider="local",
        tools=["knowledge_search"],
        users=reviewers,
        agent_names=["lead_agent"],
    )
    binding_create(name="orphan", provider="local", tools=["knowledge_search"])
    empty = collection_get_or_create(name="Empty")
    binding_create(
        name="empty-scope",
        provider="local",
        tools=["knowledge_search"],
        users=reviewers[:1],
        browser_use=True,
        agent_names=["lead_agent"],
        scope="selected",
        selection=[{"dataset_id": str(empty.pk), "document_ids": []}],
    )
    listing = page_text(admin_client.get("/admin/bindings/knowledgebinding/"))

    assert "2 users · agent lead_agent · browser ✗" in listing
    assert "nobody (no users)" in listing
    assert "1 user · agent lead_agent · browser ✓" in listing
    assert '<td class="field-documents">1</td>' in listing
    assert '<td class="field-documents">none</td>' in listing
    assert "column-serves" in listing
    assert "column-documents" in listing

    AnswerModel.objects.create(
        name="m", base_url="http://127.0.0.1:1/v1", model="x", agent_names=["lead_agent"], browser_use=False
    ).users.set(reviewers[:1])
    models = page_text(admin_client.get("/admin/composer/answermodel/"))
    assert "1 user · agent lead_agent · browser ✗" in models


def test_a_failed_save_still_says_who_could_use_what_was_typed(
    admin_client: Client, reviewers: list[User], a_document: None
) -> None:
    response = admin_client.post(ADD, local_form(reviewers[:1], top_k="500"))

    assert response.status_code == 200
    assert summary_lines(page_text(response)) == [TRAP]
    assert KnowledgeBinding.objects.count() == 0


def test_a_preview_on_the_change_page_changes_nothing(
    admin_client: Client, reviewers: list[User], a_document: None
) -> None:
    binding = binding_create(
        name="manuals",
        provider="local",
        tools=["knowledge_search"],
        users=reviewers,
        agent_names=["lead_agent"],
    )
    url = f"/admin/bindings/knowledgebinding/{binding.pk}/change/"

    preview = admin_client.post(url, local_form(reviewers[:1], agent_names="", _preview="1"))

    assert summary_lines(page_text(preview)) == ["reviewer1: browser ✓ · any agent name ✓"]
    binding.refresh_from_db()
    assert binding.agent_names == ["lead_agent"]
    assert binding.users.count() == 2
