"""Management commands: import_thread, export_thread and create_token."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from knowledgeweb.accounts.models import ApiToken
from knowledgeweb.accounts.tokens import token_digest
from knowledgeweb.knowledge import RetrievalHit, RetrievalResult, format_result
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.selectors import thread_citations, thread_messages
from knowledgeweb.threads.services import message_append

pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def write(tmp_path: Path, document: Any) -> Path:
    path = tmp_path / "thread.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def cited_messages() -> list[dict[str, Any]]:
    content, artifact = format_result(
        RetrievalResult(provider="local", query="q", hits=(RetrievalHit(text="Evidence.", title="Doc"),))
    )
    handle = f"knowledge-source-{artifact['knowledge_sources'][0]['id']}"
    return [
        {"type": "tool", "name": "knowledge_search", "content": content, "artifact": artifact},
        {"type": "ai", "content": f"Cited [Doc](#{handle})."},
    ]


def test_create_token_prints_the_token_once_and_stores_only_its_hash(user: User) -> None:
    out, err = run("create_token", "alice", "--name", "ci")
    raw = out.strip()
    token = ApiToken.objects.get()
    assert (token.user, token.name, token.digest) == (user, "ci", token_digest(raw))
    assert raw not in err
    assert "cannot be shown again" in err
    assert Client().get("/api/threads", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 200


def test_create_token_refuses_an_unknown_user(db: None) -> None:
    with pytest.raises(CommandError, match="No user named 'nobody'"):
        run("create_token", "nobody")
    assert ApiToken.objects.count() == 0


def test_import_thread_reads_a_bare_list_of_messages(user: User, tmp_path: Path) -> None:
    path = write(tmp_path, [{"type": "human", "content": "q"}, {"type": "AIMessage", "content": "a"}])
    out, _ = run("import_thread", str(path), "--owner", "alice")
    thread = Thread.objects.get()
    assert out == f"Imported 2 messages into thread {thread.id} ('q').\n"
    # A bare list names no title: the first human message does.
    assert (thread.title, thread.owner) == ("q", user)
    assert [(m.type, m.content) for m in thread_messages(thread=thread)] == [("human", "q"), ("ai", "a")]


def test_import_thread_reads_an_import_body_and_strips_evidence_by_default(
    user: User, tmp_path: Path
) -> None:
    path = write(tmp_path, {"title": "From file", "agent_name": "bot", "messages": cited_messages()})
    run("import_thread", str(path), "--owner", "alice")
    thread = Thread.objects.get()
    assert (thread.title, thread.agent_name) == ("From file", "bot")
    assert thread_messages(thread=thread)[0].artifact == {}
    assert [c.state for c in thread_citations(thread=thread)[0].citations] == ["unresolved"]


def test_import_thread_trusted_keeps_evidence_that_the_reader_then_validates(
    user: User, tmp_path: Path
) -> None:
    path = write(tmp_path, cited_messages())
    out, _ = run("import_thread", str(path), "--owner", "alice", "--trusted")
    assert "trusted" in out
    thread = Thread.objects.get()
    assert [c.state for c in thread_citations(thread=thread)[0].citations] == ["resolved"]


def test_import_thread_trusted_stores_a_record_with_a_wrong_id_but_its_citation_is_unresolved(
    user: User, tmp_path: Path
) -> None:
    messages = cited_messages()
    record = messages[0]["artifact"]["knowledge_sources"][0]
    wrong = "0" * 32
    # Only the id is wrong: the handle in the content and the citation both carry it.
    messages[0]["content"] = messages[0]["content"].replace(record["id"], wrong)
    messages[1]["content"] = messages[1]["content"].replace(record["id"], wrong)
    record["id"] = wrong
    run("import_thread", str(write(tmp_path, messages)), "--owner", "alice", "--trusted")
    thread = Thread.objects.get()
    stored = thread_messages(thread=thread)[0].artifact
    assert stored is not None
    assert stored["knowledge_sources"] == [record]
    (citation,) = thread_citations(thread=thread)[0].citations
    assert (citation.href, citation.state, citation.source) == (
        f"#knowledge-source-{wrong}",
        "unresolved",
        None,
    )


def test_import_thread_names_the_invalid_message_and_writes_nothing(user: User, tmp_path: Path) -> None:
    messages: list[Any] = [{"type": "human", "content": str(i)} for i in range(100)]
    messages[56] = {"type": "critic", "content": "?"}
    with pytest.raises(CommandError, match="Nothing imported: message 57: unknown message type 'critic'"):
        run("import_thread", str(write(tmp_path, messages)), "--owner", "alice")
    assert (Thread.objects.count(), Message.objects.count()) == (0, 0)


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ("{not json", "is not valid JSON"),
        (
            '{"title": "no messages"}',
            "Nothing imported: the body is an object with keys 'title', which is not a thread. Accepted: ",
        ),
        ('"a string"', "Nothing imported: the body is a string, which is not a thread"),
        ("[]", "Nothing imported: the import holds no messages"),
    ],
)
def test_import_thread_refuses_a_bad_file(user: User, tmp_path: Path, content: str, error: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CommandError, match=error):
        run("import_thread", str(path), "--owner", "alice")
    assert Thread.objects.count() == 0


def test_import_thread_refuses_a_missing_file_or_owner(user: User, tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="Cannot read"):
        run("import_thread", str(tmp_path / "absent.json"), "--owner", "alice")
    with pytest.raises(CommandError, match="No user named 'carol'"):
        run("import_thread", str(write(tmp_path, [])), "--owner", "carol")
    assert Thread.objects.count() == 0


def test_export_thread_prints_json_and_markdown(thread: Thread) -> None:
    message_append(thread=thread, type="human", content="Hello")
    out, _ = run("export_thread", str(thread.id), "--format", "json")
    assert [m["content"] for m in json.loads(out)["messages"]] == ["Hello"]
    out, _ = run("export_thread", str(thread.id), "--format", "markdown")
    assert out.startswith("# A thread\n")
    assert "## 1. Human\n\nHello\n" in out


def test_export_thread_refuses_a_bad_or_unknown_id(db: None) -> None:
    with pytest.raises(CommandError, match="'nope' is not a thread id"):
        run("export_thread", "nope")
    with pytest.raises(CommandError, match="No thread 00000000-0000-4000-8000-000000000000"):
        run("export_thread", "00000000-0000-4000-8000-000000000000")


def test_import_thread_refuses_a_file_nested_too_deeply_to_parse(user: User, tmp_path: Path) -> None:
    deep = '[{"type": "ai", "content": "x", "artifact": {"a": ' + "[" * 100_000 + "]" * 100_000 + "}}]"
    path = tmp_path / "deep.json"
    path.write_text(deep, encoding="utf-8")

    with pytest.raises(CommandError, match="nested too deeply to read as JSON"):
        call_command("import_thread", str(path), owner=user.username)
    assert Thread.objects.count() == 0
    assert Message.objects.count() == 0
