"""Live answer model: the whole Ask flow against a real OpenAI-compatible server.

Opt-in: set ``KNOWLEDGEWEB_LIVE_OPENAI_URL`` (the base URL, e.g. http://127.0.0.1:11434/v1
for Ollama) and ``KNOWLEDGEWEB_LIVE_OPENAI_MODEL``; ``KNOWLEDGEWEB_LIVE_OPENAI_KEY`` when the
server needs a key (the test hands it to the answer model through a ``KNOWLEDGEWEB_KEY_``
variable, as an admin would). The question is asked of the local index holding a few
passages; the answer streams from the real model, and every citation that resolves must
quote a real passage of the index. Citations that do not resolve are allowed (a model may
invent handles) but must be reported, and the key must appear nowhere.
"""

from __future__ import annotations

import json
import os

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.bindings.services import binding_create
from knowledgeweb.composer.models import AnswerModel
from knowledgeweb.library.models import Chunk
from knowledgeweb.library.services import ChunkDraft, collection_get_or_create, document_ingest
from knowledgeweb.threads.models import Message, Thread

pytestmark = pytest.mark.live

URL = os.environ.get("KNOWLEDGEWEB_LIVE_OPENAI_URL", "")
MODEL = os.environ.get("KNOWLEDGEWEB_LIVE_OPENAI_MODEL", "")
KEY = os.environ.get("KNOWLEDGEWEB_LIVE_OPENAI_KEY", "")
KEY_ENV = "KNOWLEDGEWEB_KEY_LIVE_OPENAI"

PASSAGES = {
    "Kingfishers": "Kingfishers hunt by diving into water from a perch. They nest in burrows dug into river banks.",
    "Herons": "Herons hunt by standing still in shallow water. They nest in colonies high in trees.",
    "Swifts": "Swifts spend almost their whole lives flying. They even sleep on the wing.",
}


@pytest.mark.skipif(not (URL and MODEL), reason="set KNOWLEDGEWEB_LIVE_OPENAI_URL and _MODEL to run")
def test_a_real_model_answers_and_every_resolved_citation_quotes_real_evidence(
    user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    binding_create(name="local", provider="local", tools=["knowledge_search"], users=[user])
    collection = collection_get_or_create(name="birds")
    for title, text in PASSAGES.items():
        document_ingest(
            collection=collection,
            source_key=title,
            content_hash=title,
            title=title,
            source_url="",
            chunks=[ChunkDraft(text)],
        )
    if KEY:
        monkeypatch.setenv(KEY_ENV, KEY)
    model = AnswerModel(
        name="live", base_url=URL, model=MODEL, api_key_env=KEY_ENV if KEY else "", timeout=60, temperature=0
    )
    model.full_clean()
    model.save()
    model.users.add(user)
    web = Client()
    web.force_login(user)

    response = web.post(
        "/ask/stream/",
        {"question": "How do kingfishers hunt and nest?", "binding": "local", "composer": "live"},
    )
    raw = b"".join(response.streaming_content).decode()  # type: ignore[attr-defined]

    assert response.status_code == 200
    done = json.loads(raw.rsplit("event: done\ndata: ", 1)[1])
    assert done["status"] == "answered", done["detail"]
    thread = Thread.objects.get()
    report = Client()
    report.force_login(user)
    citations = [
        c
        for entry in report.get(f"/api/threads/{thread.id}/citations").json()["messages"]
        for c in entry["citations"]
    ]
    resolved = [c for c in citations if c["state"] == "resolved"]
    assert done["citations"]["resolved"] == len(resolved)
    assert done["citations"]["total"] == len(citations)
    real = set(Chunk.objects.values_list("text", flat=True))
    for citation in resolved:
        assert citation["source"]["excerpt"] in real
    if KEY:
        stored = json.dumps([(m.content, m.artifact) for m in Message.objects.all()])
        assert KEY not in stored
        assert KEY not in raw
