"""The dataset out of a queue (issue 27): every row validates against its JSON Schema, carries
the claim, the exact evidence and the verdicts, the final verdict follows the lead then the
majority, CSV cells cannot start a formula, and it streams from the API and the command."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.http import StreamingHttpResponse
from jsonschema import Draft202012Validator

from knowledgeweb.review.adjudication import final_verdict_record
from knowledgeweb.review.dataset import CSV_COLUMNS, escape_cell, export_lines, queue_rows
from tests.factories import TokenFactory, UserFactory
from tests.review_queues import add_answer, cited_thread, items_of, judge, queue_for

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "contracts" / "review_dataset_row.v1.json").read_text()
)


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    Draft202012Validator.check_schema(SCHEMA)
    return Draft202012Validator(SCHEMA)


@pytest.fixture
def judged(db: None) -> dict[str, Any]:
    agent, alice, bob, lead = (UserFactory.create(username=n) for n in ("agent", "alice", "bob", "lead"))
    thread = cited_thread(agent, title="Budget", citations=2)
    untouched = cited_thread(agent, title="Nobody judged this")
    add_answer(thread, '=HYPERLINK("http://evil.example") is what I say.')
    queue = queue_for([agent], [alice, bob], overlap=2, lead=lead)
    judge(thread, alice, ["supports", "supports"], note="-looks fine")
    judge(thread, bob, ["cant_tell", "does_not_support"], note="@see page 2")
    return {"thread": thread, "untouched": untouched, "queue": queue, "lead": lead, "alice": alice}


def test_every_row_validates_and_carries_claim_evidence_and_verdicts(
    judged: dict[str, Any], validator: Draft202012Validator
) -> None:
    rows = list(queue_rows(judged["queue"]))
    for row in rows:
        errors = [e.message for e in validator.iter_errors(row)]
        assert errors == [], row
    assert [(r["kind"], r["position"]) for r in rows] == [
        ("citation", 1),
        ("citation", 2),
        ("answer", 0),
        ("answer", 0),
    ]
    assert {r["thread"]["title"] for r in rows} == {"Budget"}  # nothing judged, no rows
    first = rows[0]
    assert first["claim"] == "Claim 1 holds."
    assert first["label"] == "doc-1"
    assert first["question"] == "What does Budget say?"
    assert first["source"]["title"] == "doc-1.md"
    assert first["source"]["excerpt"] == "Fact number 1 of Budget."
    assert first["source"]["dataset"] == "Corpus"
    assert first["source"]["url"] == "https://example.org/1"
    assert [(v["reviewer"], v["value"], v["note"]) for v in first["verdicts"]] == [
        ("alice", "supports", "-looks fine"),
        ("bob", "cant_tell", "@see page 2"),
    ]
    # "can't tell" is not counted: alice's verdict is the majority of one.
    assert first["final"] == {"value": "supports", "origin": "majority", "note": "", "at": None}
    assert rows[1]["final"]["origin"] == "none"  # one against one: no majority


def test_the_leads_final_verdict_wins_over_any_majority(judged: dict[str, Any]) -> None:
    citation = next(i for i in items_of(judged["thread"]) if i.key.position == 2)
    final_verdict_record(
        queue=judged["queue"],
        lead=judged["lead"],
        message_id=citation.key.message_id,
        kind="citation",
        position=2,
        value="partly_supports",
        note="Half of it.",
    )
    row = list(queue_rows(judged["queue"]))[1]
    assert row["final"]["value"] == "partly_supports"
    assert row["final"]["origin"] == "adjudicated"
    assert row["final"]["note"] == "Half of it."


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_a_cell_starting_a_formula_is_escaped(start: str) -> None:
    assert escape_cell(f"{start}1+1") == f"'{start}1+1"
    assert escape_cell("1+1") == "1+1"


def test_the_csv_has_the_columns_and_no_cell_a_spreadsheet_would_run(judged: dict[str, Any]) -> None:
    text = "".join(export_lines(judged["queue"], "csv"))
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == CSV_COLUMNS
    assert len(rows) == 5
    for row in rows[1:]:
        assert not any(cell.startswith(("=", "+", "-", "@")) for cell in row), row
    answer = dict(zip(CSV_COLUMNS, rows[4], strict=True))
    assert answer["answer"] == '\'=HYPERLINK("http://evil.example") is what I say.'
    assert json.loads(answer["verdicts"])[0]["note"] == "-looks fine"  # inside JSON, kept as written


def test_the_api_streams_jsonl_that_validates(
    judged: dict[str, Any], validator: Draft202012Validator
) -> None:
    client = TokenFactory.create(user=judged["alice"]).client()
    response = client.get(f"/api/review/queues/{judged['queue'].pk}/export?format=jsonl")
    assert response.status_code == 200
    assert isinstance(response, StreamingHttpResponse)
    assert response["Content-Type"].startswith("application/x-ndjson")
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert len(lines) == 4
    for line in lines:
        assert list(validator.iter_errors(json.loads(line))) == []
    csv_response = client.get(f"/api/review/queues/{judged['queue'].pk}/export?format=csv")
    assert csv_response["Content-Type"].startswith("text/csv")


def test_the_command_writes_the_file_and_refuses_an_unknown_queue(
    judged: dict[str, Any], tmp_path: Path
) -> None:
    out = tmp_path / "rows.jsonl"
    call_command("export_reviews", judged["queue"].name, "--output", str(out), stderr=io.StringIO())
    assert len(out.read_text().splitlines()) == 4
    printed = io.StringIO()
    call_command("export_reviews", str(judged["queue"].pk), "--format", "csv", stdout=printed)
    assert printed.getvalue().splitlines()[0].startswith("kind,queue_id,")
    with pytest.raises(CommandError, match="No review queue 'nope'"):
        call_command("export_reviews", "nope")
