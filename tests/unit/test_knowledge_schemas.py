"""The JSON Schemas in contracts/ pin every bound of docs/contract.md#source-records, on both sides."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.unit.strategies import NONCE, native_message, native_record, shared_message, shared_record

HEX = "0123456789abcdef" * 2

# (field, value at the bound, value just past it) for the shared record.
SHARED_EDGES: list[tuple[str, Any, Any]] = [
    ("id", HEX, HEX[:31]),
    ("id", HEX, HEX + "0"),
    ("id", HEX, HEX.upper()),
    ("id", HEX, HEX + "\n"),
    ("provider", "a", ""),
    ("provider", "a" + "b" * 63, "a" + "b" * 64),
    ("provider", "r.a_g-f1ow", "1ragflow"),
    ("provider", "ragflow", "RAGFlow"),
    ("provider", "ragflow", "ragflow\n"),
    ("title", "T", ""),
    ("title", "T" * 1024, "T" * 1025),
    ("title", " T ", " \t\n "),
    ("excerpt", "e", ""),
    ("excerpt", "e" * 200_000, "e" * 200_001),
    ("excerpt", "\ne\n", "\n  \n"),
    ("dataset_name", "d", ""),
    ("dataset_name", "d" * 1024, "d" * 1025),
    ("dataset_name", "d", None),
    ("url", "http://example.org/", "ftp://example.org/"),
    ("url", "https://example.org/", "javascript:alert(1)"),
    ("url", "https://example.org/", "file:///etc/passwd"),
    ("url", "https://example.org/", "data:text/html,hi"),
    ("url", "https://example.org/" + "a" * (2048 - 20), "https://example.org/" + "a" * (2049 - 20)),
    ("page", 1, 0),
    ("page", 1_000_000, 1_000_001),
    ("page", 7, "7"),
    ("page", 7, 7.5),
    ("page", 7, True),
    ("page", 7, None),
]

NATIVE_EDGES: list[tuple[str, Any, Any]] = [
    ("id", f"{NONCE}-1", f"{NONCE}-0"),
    ("id", f"{NONCE}-999", f"{NONCE}-1000"),
    ("id", f"{NONCE}-10", f"{NONCE}-01"),
    ("id", f"{NONCE}-1", NONCE),
    ("id", f"{NONCE}-1", f"{NONCE.upper()}-1"),
    ("id", f"{NONCE}-1", f"{NONCE}-1\n"),
    ("provider", "ragflow", "lightrag"),
    ("dataset_id", "x", ""),
    ("dataset_id", "x" * 256, "x" * 257),
    ("document_id", "x", ""),
    ("document_id", "x" * 256, "x" * 257),
    ("chunk_id", "x", ""),
    ("chunk_id", "x" * 256, "x" * 257),
    ("dataset_name", "n", ""),
    ("dataset_name", "n" * 1024, "n" * 1025),
    ("document_name", "n", ""),
    ("document_name", "n" * 1024, "n" * 1025),
    ("text", "t", ""),
    ("text", "t" * 200_000, "t" * 200_001),
    ("truncated", True, "true"),
    ("truncated", False, 0),
    ("pages", [], None),
    ("pages", list(range(1, 101)), list(range(1, 102))),
    ("pages", [1], [0]),
    ("pages", [1_000_000], [1_000_001]),
    ("pages", [2], ["2"]),
]


def _ids(edges: list[tuple[str, Any, Any]]) -> list[str]:
    return [f"{field}-{index}" for index, (field, _, _) in enumerate(edges)]


def _shared_artifact(**record_fields: Any) -> dict[str, Any]:
    record = shared_record()
    record.update(record_fields)
    return {"knowledge_sources_version": 1, "knowledge_sources": [record]}


def _native_artifact(**record_fields: Any) -> dict[str, Any]:
    return {"knowledge_sources": {"version": 1, "sources": [native_record(1, **record_fields)]}}


@pytest.mark.parametrize(("field", "inside", "outside"), SHARED_EDGES, ids=_ids(SHARED_EDGES))
def test_shared_record_field_accepts_its_bound_and_rejects_one_past_it(
    shared_schema: Draft202012Validator, field: str, inside: Any, outside: Any
) -> None:
    assert shared_schema.is_valid(_shared_artifact(**{field: inside}))
    assert not shared_schema.is_valid(_shared_artifact(**{field: outside}))


@pytest.mark.parametrize(("field", "inside", "outside"), NATIVE_EDGES, ids=_ids(NATIVE_EDGES))
def test_native_record_field_accepts_its_bound_and_rejects_one_past_it(
    native_schema: Draft202012Validator, field: str, inside: Any, outside: Any
) -> None:
    assert native_schema.is_valid(_native_artifact(**{field: inside}))
    assert not native_schema.is_valid(_native_artifact(**{field: outside}))


def test_shared_envelope_holds_zero_to_one_hundred_records_but_not_one_hundred_and_one(
    shared_schema: Draft202012Validator,
) -> None:
    records = [shared_record(excerpt=f"excerpt {n}") for n in range(101)]
    assert shared_schema.is_valid({"knowledge_sources_version": 1, "knowledge_sources": []})
    assert shared_schema.is_valid({"knowledge_sources_version": 1, "knowledge_sources": records[:100]})
    assert not shared_schema.is_valid({"knowledge_sources_version": 1, "knowledge_sources": records})


def test_native_snapshot_holds_zero_to_one_hundred_sources_but_not_one_hundred_and_one(
    native_schema: Draft202012Validator,
) -> None:
    sources = [native_record(n) for n in range(1, 102)]
    assert native_schema.is_valid({"knowledge_sources": {"version": 1, "sources": []}})
    assert native_schema.is_valid({"knowledge_sources": {"version": 1, "sources": sources[:100]}})
    assert not native_schema.is_valid({"knowledge_sources": {"version": 1, "sources": sources}})


@pytest.mark.parametrize("version", [0, 2, "1", None])
def test_shared_envelope_accepts_only_version_one(shared_schema: Draft202012Validator, version: Any) -> None:
    _, artifact = shared_message([shared_record()])
    assert shared_schema.is_valid(artifact)
    assert not shared_schema.is_valid({**artifact, "knowledge_sources_version": version})
    del artifact["knowledge_sources_version"]
    assert not shared_schema.is_valid(artifact)


@pytest.mark.parametrize("version", [0, 2, "1", None])
def test_native_snapshot_accepts_only_version_one(native_schema: Draft202012Validator, version: Any) -> None:
    _, artifact = native_message([native_record(1)])
    assert native_schema.is_valid(artifact)
    artifact["knowledge_sources"]["version"] = version
    assert not native_schema.is_valid(artifact)


@pytest.mark.parametrize("key", ["id", "provider", "title", "excerpt"])
def test_shared_record_requires_each_of_its_four_keys(shared_schema: Draft202012Validator, key: str) -> None:
    artifact = _shared_artifact()
    del artifact["knowledge_sources"][0][key]
    assert not shared_schema.is_valid(artifact)


@pytest.mark.parametrize(
    "key",
    [
        "id",
        "provider",
        "dataset_id",
        "document_id",
        "chunk_id",
        "dataset_name",
        "document_name",
        "text",
        "truncated",
        "pages",
    ],
)
def test_native_record_requires_each_of_its_ten_keys(native_schema: Draft202012Validator, key: str) -> None:
    artifact = _native_artifact()
    del artifact["knowledge_sources"]["sources"][0][key]
    assert not native_schema.is_valid(artifact)


def test_shared_record_takes_all_optional_fields_but_no_other_key(
    shared_schema: Draft202012Validator,
) -> None:
    full = shared_record(dataset_name="Handbook", url="https://example.org/guide", page=3)
    assert shared_schema.is_valid({"knowledge_sources_version": 1, "knowledge_sources": [full]})
    assert not shared_schema.is_valid(_shared_artifact(score=0.5))
    assert not shared_schema.is_valid(_shared_artifact(chunk_id="c1"))


def test_native_record_and_snapshot_take_no_other_key(native_schema: Draft202012Validator) -> None:
    assert not native_schema.is_valid(_native_artifact(score=0.5))
    _, artifact = native_message([native_record(1)])
    artifact["knowledge_sources"]["extra"] = True
    assert not native_schema.is_valid(artifact)


def test_both_envelopes_keep_room_for_unrelated_artifact_keys(
    shared_schema: Draft202012Validator, native_schema: Draft202012Validator
) -> None:
    _, shared = shared_message([shared_record()])
    _, native = native_message([native_record(1)])
    assert shared_schema.is_valid({**shared, "usage": {"tokens": 3}, "trace": "t-1"})
    assert native_schema.is_valid({**native, "usage": {"tokens": 3}, "trace": "t-1"})


def test_shared_schema_accepts_the_coexistence_form_beside_a_native_snapshot(
    shared_schema: Draft202012Validator, native_schema: Draft202012Validator
) -> None:
    _, native = native_message([native_record(1)])
    artifact = {**native, "knowledge_sources_version": 1, "retrieval_sources": [shared_record()]}
    assert shared_schema.is_valid(artifact)
    assert native_schema.is_valid(artifact)


def test_coexistence_form_caps_shared_records_at_one_hundred(shared_schema: Draft202012Validator) -> None:
    _, native = native_message([native_record(1)])
    records = [shared_record(excerpt=f"excerpt {n}") for n in range(101)]
    assert shared_schema.is_valid(
        {**native, "knowledge_sources_version": 1, "retrieval_sources": records[:100]}
    )
    assert not shared_schema.is_valid(
        {**native, "knowledge_sources_version": 1, "retrieval_sources": records}
    )


def test_coexistence_form_checks_its_shared_records_and_the_snapshot_shape(
    shared_schema: Draft202012Validator,
) -> None:
    _, native = native_message([native_record(1)])
    good = {**native, "knowledge_sources_version": 1, "retrieval_sources": [shared_record()]}

    bad_record = copy.deepcopy(good)
    bad_record["retrieval_sources"][0]["page"] = 0
    bad_snapshot_version = copy.deepcopy(good)
    bad_snapshot_version["knowledge_sources"]["version"] = 2
    no_version = copy.deepcopy(good)
    del no_version["knowledge_sources_version"]

    assert shared_schema.is_valid(good)
    assert not shared_schema.is_valid(bad_record)
    assert not shared_schema.is_valid(bad_snapshot_version)
    assert not shared_schema.is_valid(no_version)


def test_shared_schema_rejects_records_that_are_not_a_list_or_shared_records_in_both_places(
    shared_schema: Draft202012Validator,
) -> None:
    record = shared_record()
    assert not shared_schema.is_valid({"knowledge_sources_version": 1, "knowledge_sources": record})
    assert not shared_schema.is_valid({"knowledge_sources_version": 1, "knowledge_sources": "x"})
    assert not shared_schema.is_valid(
        {"knowledge_sources_version": 1, "knowledge_sources": [record], "retrieval_sources": [record]}
    )
    assert not shared_schema.is_valid([record])


def test_native_schema_rejects_a_shared_envelope(native_schema: Draft202012Validator) -> None:
    _, shared = shared_message([shared_record()])
    assert not native_schema.is_valid(shared)


def test_the_builders_used_by_these_tests_produce_valid_artifacts(
    shared_schema: Draft202012Validator, native_schema: Draft202012Validator
) -> None:
    """Guards the edge tests above: each 'inside' case starts from a valid artifact."""
    shared_schema.validate(_shared_artifact())
    native_schema.validate(_native_artifact())
