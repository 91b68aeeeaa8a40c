"""Source ids follow docs/contract.md#source-records exactly."""

from __future__ import annotations

from typing import Any

import pytest

from knowledgeweb.knowledge import source_id

GUIDE: dict[str, Any] = {
    "provider": "lightrag",
    "title": "docs/guide.md",
    "excerpt": "Actual retrieved document text",
}
MANUAL: dict[str, Any] = {
    "provider": "ragflow",
    "title": "Café manual",
    "excerpt": "Grind fine — 18 g in, 36 g out.",
    "dataset_name": "Barista handbook",
    "url": "https://example.org/café",
    "page": 12,
}


def test_source_id_matches_a_value_computed_by_hand_with_absent_fields_as_null() -> None:
    # Computed outside the project, by writing the serialized JSON array out literally:
    #   ["knowledgeweb.source.v1","lightrag","docs/guide.md","Actual retrieved document text",null,null,null]
    # (no spaces, UTF-8), then `printf '%s' '<that array>' | sha256sum` and keeping the first 32 hex:
    #   da10b6f8d234978360f603c090e2636c|c6f97b89fd9a32cf81d14db09da6f6f5
    assert source_id(**GUIDE) == "da10b6f8d234978360f603c090e2636c"


def test_source_id_matches_a_value_computed_by_hand_with_every_field_and_non_ascii_text() -> None:
    # Same method. ensure_ascii=False keeps "é" and "—" as raw UTF-8 bytes, not \u escapes:
    #   ["knowledgeweb.source.v1","ragflow","Café manual","Grind fine — 18 g in, 36 g out.",
    #    "Barista handbook","https://example.org/café",12]
    # printf '%s' ... | sha256sum -> c70017b5c93295fa730a466aa684a116|3e0eafffbdbe117509f34dd7324ecd49
    assert source_id(**MANUAL) == "c70017b5c93295fa730a466aa684a116"


@pytest.mark.parametrize(
    ("field", "other"),
    [
        ("provider", "ragflow2"),
        ("title", "Cafe manual"),
        ("excerpt", "Grind fine — 18 g in, 36 g out. "),
        ("dataset_name", "Barista handbook 2"),
        ("dataset_name", None),
        ("url", "https://example.org/cafe"),
        ("url", None),
        ("page", 13),
        ("page", None),
    ],
)
def test_source_id_changes_when_any_one_field_changes(field: str, other: Any) -> None:
    changed = {**MANUAL, field: other}
    assert source_id(**changed) != source_id(**MANUAL)


def test_source_id_keeps_fields_apart_instead_of_concatenating_them() -> None:
    assert source_id("lightrag", "ab", "c") != source_id("lightrag", "a", "bc")


def test_source_id_is_thirty_two_lowercase_hex_characters() -> None:
    value = source_id(**GUIDE)
    assert len(value) == 32
    assert set(value) <= set("0123456789abcdef")
