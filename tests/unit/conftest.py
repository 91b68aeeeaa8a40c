"""Fixtures for the contract-core unit tests: the JSON Schemas, loaded once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

CONTRACTS = Path(__file__).resolve().parents[2] / "contracts"


def _validator(name: str) -> Draft202012Validator:
    schema: dict[str, Any] = json.loads((CONTRACTS / name).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@pytest.fixture(scope="session")
def shared_schema() -> Draft202012Validator:
    """contracts/knowledge_sources.v1.json (session-scoped so hypothesis tests may use it)."""
    return _validator("knowledge_sources.v1.json")


@pytest.fixture(scope="session")
def native_schema() -> Draft202012Validator:
    """contracts/ragflow_knowledge_sources.v1.json."""
    return _validator("ragflow_knowledge_sources.v1.json")
