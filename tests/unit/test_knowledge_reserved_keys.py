"""strip_reserved_keys enforces the trust boundary of docs/contract.md#trust-boundary."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from knowledgeweb.knowledge import RESERVED_KEYS, strip_reserved_keys
from tests.unit.strategies import native_message, native_record, shared_record


def test_reserved_keys_are_exactly_the_three_envelope_keys_and_the_receipt() -> None:
    # The receipt is reserved too: an import keeps it only after checking it (threads/receipts.py).
    assert set(RESERVED_KEYS) == {
        "knowledge_sources",
        "knowledge_sources_version",
        "retrieval_sources",
        "knowledge_receipt",
    }


def test_it_strips_all_three_reserved_keys_and_keeps_every_other_key() -> None:
    _, native = native_message([native_record(1)])
    artifact = {
        **native,
        "knowledge_sources_version": 1,
        "retrieval_sources": [shared_record()],
        "usage": {"tokens": 12},
        "trace_id": "t-1",
        "knowledge": "not reserved",
    }
    assert strip_reserved_keys(artifact) == {
        "usage": {"tokens": 12},
        "trace_id": "t-1",
        "knowledge": "not reserved",
    }


def test_it_does_not_mutate_the_callers_artifact() -> None:
    artifact = {"knowledge_sources_version": 1, "knowledge_sources": [shared_record()], "keep": [1, 2]}
    before = copy.deepcopy(artifact)
    stripped = strip_reserved_keys(artifact)
    assert artifact == before
    assert stripped is not artifact


def test_it_returns_a_new_dict_even_when_nothing_is_reserved() -> None:
    artifact = {"keep": 1}
    stripped = strip_reserved_keys(artifact)
    assert stripped == {"keep": 1}
    assert stripped is not artifact


def test_it_returns_none_for_none() -> None:
    assert strip_reserved_keys(None) is None


@pytest.mark.parametrize("value", [[{"knowledge_sources": []}], "knowledge_sources", 7, ("a", "b")])
def test_it_returns_none_for_an_artifact_that_is_not_a_dict(value: Any) -> None:
    assert strip_reserved_keys(value) is None
