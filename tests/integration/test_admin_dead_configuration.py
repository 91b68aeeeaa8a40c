"""No dead configuration saved silently: confirmations, one message per problem, other providers' fields ignored."""

from __future__ import annotations

import html
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.composer.models import AnswerModel
from knowledgeweb.library.models import Chunk, Collection, Document
from knowledgeweb.library.services import ChunkDraft, collection_get_or_create, document_ingest

pytestmark = pytest.mark.django_db

ADD = "/admin/bindings/knowledgebinding/add/"
MODEL_ADD = "/admin/composer/answermodel/add/"
DOCUMENT_ADD = "/admin/library/document/add/"


def binding_form(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "manuals",
        "provider": "local",
        "enabled": "on",
        "tools": ["knowledge_search"],
        "top_k": "20",
        "timeout": "30",
        "scope": "all",
    }
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


def model_form(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "ollama",
        "enabled": "on",
        "base_url": "http://127.0.0.1:11434/v1",
        "model": "llama3.1:8b",
        "api_key_env": "",
        "temperature": "0.2",
        "max_output_tokens": "1024",
        "context_budget": "24000",
        "timeout": "60",
    }
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


def text(response: Any) -> str:
    return html.unescape(response.content.decode())


def field_errors(response: Any, field: str) -> list[str]:
    form = response.context["adminform"].form
    return [str(message) for message in form.errors.get(field, [])]


@pytest.fixture
def manuals() -> Collection:
    collection = collection_get_or_create(name="Manuals")
    document_ingest(
        collection=collection,
        source_key="guide.txt",
        content_hash="h",
        title="Guide",
        source_url="",
        chunks=[ChunkDraft("The ferry leaves at noon.")],
    )
    return collection


# --- serves nobody --------------------------------------------------------------------------


def test_a_binding_without_users_asks_for_confirmation_and_confirmed_saves(
    admin_client: Client, manuals: Collection
) -> None:
    asked = admin_client.post(ADD, binding_form())

    assert asked.status_code == 200
    assert KnowledgeBinding.objects.count() == 0
    assert field_errors(asked, "users") == [
        "Nobody can use this binding: no users are chosen. Choose its users, or tick 'Save anyway' to save it "
        "unused."
    ]
    assert 'data-confirm="unused"' in text(asked)
    assert 'name="confirm_unused"' in text(asked)

    saved = admin_client.post(ADD, binding_form(confirm_unused="on"))
    assert saved.status_code == 302
    assert KnowledgeBinding.objects.get().users.count() == 0


def test_a_disabled_binding_without_users_is_a_choice_not_a_dead_end(
    admin_client: Client, manuals: Collection
) -> None:
    assert admin_client.post(ADD, binding_form(enabled=None)).status_code == 302


def test_an_answer_model_without_users_asks_and_confirmed_saves(admin_client: Client) -> None:
    asked = admin_client.post(MODEL_ADD, model_form())
    assert asked.status_code == 200
    assert field_errors(asked, "users") == [
        "Nobody can use this answer model: no users are chosen. Choose its users, or tick 'Save anyway' to "
        "save it unused."
    ]
    assert AnswerModel.objects.count() == 0

    assert admin_client.post(MODEL_ADD, model_form(confirm_unused="on")).status_code == 302
    assert AnswerModel.objects.count() == 1


def test_a_key_variable_that_is_not_set_asks_for_confirmation_and_confirmed_saves(
    admin_client: Client, user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KNOWLEDGEWEB_KEY_UNSET_HERE", raising=False)
    form = binding_form(
        name="ragflow-main",
        provider="ragflow",
        users=[str(user.pk)],
        base_url="https://ragflow.example.test",
        api_key_env="KNOWLEDGEWEB_KEY_UNSET_HERE",
    )

    asked = admin_client.post(ADD, form)

    assert field_errors(asked, "api_key_env") == [
        "KNOWLEDGEWEB_KEY_UNSET_HERE is not set in this server's environment, so every use of this binding is "
        "refused until it is. Set it (and restart), or tick 'Save anyway'."
    ]
    assert KnowledgeBinding.objects.count() == 0
    assert admin_client.post(ADD, {**form, "confirm_unused": "on"}).status_code == 302
    assert KnowledgeBinding.objects.count() == 1


def test_an_answer_models_unset_key_variable_asks_too(
    admin_client: Client, user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KNOWLEDGEWEB_KEY_UNSET_HERE", raising=False)
    form = model_form(users=[str(user.pk)], api_key_env="KNOWLEDGEWEB_KEY_UNSET_HERE")

    asked = admin_client.post(MODEL_ADD, form)

    [message] = field_errors(asked, "api_key_env")
    assert message.startswith(
        "KNOWLEDGEWEB_KEY_UNSET_HERE is not set in this server's environment, so every use "
    )
    assert "of this answer model is refused" in message
    assert AnswerModel.objects.count() == 0
    monkeypatch.setenv("KNOWLEDGEWEB_KEY_UNSET_HERE", "now-it-is-set")
    assert admin_client.post(MODEL_ADD, form).status_code == 302


def test_every_problem_to_confirm_is_named_at_once(
    admin_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KNOWLEDGEWEB_KEY_UNSET_HERE", raising=False)
    asked = admin_client.post(MODEL_ADD, model_form(api_key_env="KNOWLEDGEWEB_KEY_UNSET_HERE"))

    assert sorted(asked.context["adminform"].form.errors) == ["api_key_env", "users"]
    assert AnswerModel.objects.count() == 0


# --- searches nothing -----------------------------------------------------------------------


def test_selected_collections_without_documents_ask_for_confirmation_naming_them(
    admin_client: Client, user: User, manuals: Collection
) -> None:
    empty = collection_get_or_create(name="Empty shelf")
    form = binding_form(users=[str(user.pk)], scope="selected", collections=[str(empty.pk), str(manuals.pk)])

    asked = admin_client.post(ADD, form)

    assert asked.status_code == 200
    assert field_errors(asked, "collections") == [
        "Collection 'Empty shelf' has no documents, so this binding's searches of it find nothing. Add "
        "documents first (manage.py ingest, or Add document), or tick 'Save anyway'."
    ]
    assert KnowledgeBinding.objects.count() == 0

    assert admin_client.post(ADD, {**form, "confirm_unused": "on"}).status_code == 302
    assert KnowledgeBinding.objects.get().selection == [
        {"dataset_id": str(empty.pk), "document_ids": []},
        {"dataset_id": str(manuals.pk), "document_ids": []},
    ]


def test_the_whole_local_index_without_documents_asks_for_confirmation(
    admin_client: Client, user: User
) -> None:
    asked = admin_client.post(ADD, binding_form(users=[str(user.pk)]))
    assert asked.status_code == 200
    assert field_errors(asked, "scope") == [
        "The local index has no documents yet, so this binding's searches find nothing. Add documents first "
        "(manage.py ingest, or Add document), or tick 'Save anyway'."
    ]
    assert KnowledgeBinding.objects.count() == 0
    assert admin_client.post(ADD, binding_form(users=[str(user.pk)], confirm_unused="on")).status_code == 302


def test_a_valid_binding_that_serves_someone_saves_without_a_question(
    admin_client: Client, user: User, manuals: Collection
) -> None:
    response = admin_client.post(ADD, binding_form(users=[str(user.pk)]))
    assert response.status_code == 302
    assert KnowledgeBinding.objects.count() == 1


# --- one message per problem, beside its field -----------------------------------------------


def test_no_collection_ticked_is_said_once_beside_collections(
    admin_client: Client, user: User, manuals: Collection
) -> None:
    response = admin_client.post(ADD, binding_form(users=[str(user.pk)], scope="selected"))

    assert response.status_code == 200
    assert field_errors(response, "collections") == ["Select at least one collection."]
    assert field_errors(response, "selection") == []
    assert KnowledgeBinding.objects.count() == 0


@pytest.mark.parametrize(
    ("url", "form", "field"),
    [
        (ADD, binding_form(name=""), "name"),
        (ADD, binding_form(provider=""), "provider"),
        (MODEL_ADD, model_form(name=""), "name"),
        (MODEL_ADD, model_form(base_url=""), "base_url"),
        (MODEL_ADD, model_form(model=""), "model"),
    ],
)
def test_one_empty_field_gets_one_error(
    admin_client: Client, url: str, form: dict[str, Any], field: str
) -> None:
    response = admin_client.post(url, form)
    assert response.status_code == 200
    assert len(field_errors(response, field)) == 1, field_errors(response, field)
    assert KnowledgeBinding.objects.count() + AnswerModel.objects.count() == 0


def test_the_answer_models_key_variable_error_speaks_of_answer_models(
    admin_client: Client, user: User
) -> None:
    response = admin_client.post(MODEL_ADD, model_form(users=[str(user.pk)], api_key_env="SECRET_KEY"))

    [message] = field_errors(response, "api_key_env")
    assert "an answer model may read only" in message
    assert "binding" not in message
    assert "RAGFLOW" not in message
    assert AnswerModel.objects.count() == 0


@pytest.mark.parametrize("url", [ADD, MODEL_ADD])
def test_a_key_pasted_as_the_variables_name_is_refused_and_not_shown_again(
    admin_client: Client, url: str
) -> None:
    pasted = "sk-live-Pasted/Key+Value=="
    form = binding_form if url == ADD else model_form
    response = admin_client.post(
        url, form(provider="ragflow", base_url="https://ragflow.example.test", api_key_env=pasted)
    )

    assert field_errors(response, "api_key_env")[0].endswith("not the key itself.")
    assert pasted not in response.content.decode()
    assert KnowledgeBinding.objects.count() + AnswerModel.objects.count() == 0


# --- fields of other providers are ignored --------------------------------------------------


def test_a_local_binding_ignores_the_remote_fields_and_ragflow_lines_left_filled(
    admin_client: Client, user: User, manuals: Collection
) -> None:
    response = admin_client.post(
        ADD,
        binding_form(
            users=[str(user.pk)],
            base_url="https://ragflow.example.test",
            api_key_env="KNOWLEDGEWEB_KEY_RAGFLOW",
            selection="dsA/",  # malformed: an error if it applied
            query_modes=["mix"],
            default_mode="mix",
        ),
    )

    assert response.status_code == 302, text(response)[:3000]
    binding = KnowledgeBinding.objects.get()
    assert (
        binding.base_url,
        binding.api_key_env,
        binding.selection,
        binding.query_modes,
        binding.default_mode,
    ) == (
        "",
        "",
        [],
        [],
        "",
    )


def test_a_ragflow_binding_ignores_ticked_collections(
    admin_client: Client, user: User, manuals: Collection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KNOWLEDGEWEB_KEY_RAGFLOW", "synthetic-ragflow-key")
    response = admin_client.post(
        ADD,
        binding_form(
            name="ragflow-main",
            provider="ragflow",
            users=[str(user.pk)],
            base_url="https://ragflow.example.test",
            api_key_env="KNOWLEDGEWEB_KEY_RAGFLOW",
            scope="selected",
            selection="dsA",
            collections=[str(manuals.pk)],
        ),
    )
    assert response.status_code == 302, text(response)[:3000]
    assert KnowledgeBinding.objects.get().selection == [{"dataset_id": "dsA", "document_ids": []}]


def test_the_page_knows_which_fields_each_provider_has(admin_client: Client) -> None:
    page = text(admin_client.get(ADD))
    start = page.index("data-field-providers=")
    attribute = page[start : page.index(">", start)]
    assert '"collections": ["local"]' in attribute
    assert '"base_url": ["ragflow", "lightrag"]' in attribute
    assert '"query_modes": ["lightrag"]' in attribute
    assert '"entity_relations_search": ["lightrag"]' in attribute
    assert "knowledgeweb/admin_access.js" in page


# --- a document needs text ------------------------------------------------------------------


@pytest.mark.parametrize("pasted", ["", "   \n\n  \t "])
def test_a_document_without_text_is_refused_and_nothing_is_written(
    admin_client: Client, manuals: Collection, pasted: str
) -> None:
    before = (Document.objects.count(), Chunk.objects.count())
    response = admin_client.post(
        DOCUMENT_ADD,
        {"collection": str(manuals.pk), "title": "Only a title", "source_url": "", "text": pasted},
    )

    assert response.status_code == 200
    assert field_errors(response, "text") == [
        "A document needs text: paste its text here, or ingest its file with manage.py ingest."
    ]
    assert (Document.objects.count(), Chunk.objects.count()) == before


def test_a_document_with_text_is_saved_chunked_and_searchable(
    admin_client: Client, manuals: Collection
) -> None:
    from knowledgeweb.library.selectors import chunk_search

    body = "Lighthouses are painted every spring.\n\nThe keeper logs each ship that passes."
    response = admin_client.post(
        DOCUMENT_ADD,
        {
            "collection": str(manuals.pk),
            "title": "Keeper's notes",
            "source_url": "https://example.org/n",
            "text": body,
        },
    )

    assert response.status_code == 302, text(response)[:3000]
    document = Document.objects.get(title="Keeper's notes")
    assert [c.text for c in document.chunks.order_by("ordinal")] == [
        "Lighthouses are painted every spring.\n\nThe keeper logs each ship that passes."
    ]
    assert document.source_key.startswith("pasted:")
    assert [hit.title for hit in chunk_search(query="lighthouses", limit=5)] == ["Keeper's notes"]


def test_the_same_text_twice_in_a_collection_is_refused(admin_client: Client, manuals: Collection) -> None:
    data = {
        "collection": str(manuals.pk),
        "title": "First",
        "source_url": "",
        "text": "Tides turn twice a day.",
    }
    assert admin_client.post(DOCUMENT_ADD, data).status_code == 302
    before = (Document.objects.count(), Chunk.objects.count())

    again = admin_client.post(DOCUMENT_ADD, {**data, "title": "Second"})

    assert field_errors(again, "text") == ["This collection already holds this text, as 'First'."]
    assert (Document.objects.count(), Chunk.objects.count()) == before
