"""Fixtures for the contract-core unit tests: the JSON Schemas, loaded once."""

from __future__ import annotations

import json
from collections.abc import Callable
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


ArtifactCheck = Callable[[dict[str, Any] | None], int]


@pytest.fixture(scope="session")
def validate_artifact(
    shared_schema: Draft202012Validator, native_schema: Draft202012Validator
) -> ArtifactCheck:
    """Validate every reserved form an artifact carries; return how many schema checks ran."""

    def check(artifact: dict[str, Any] | None) -> int:
        if not artifact:
            return 0
        checks = 0
        if isinstance(artifact.get("knowledge_sources"), dict):
            native_schema.validate(artifact)
            checks += 1
        if isinstance(artifact.get("knowledge_sources"), list) or "retrieval_sources" in artifact:
            shared_schema.validate(artifact)
            checks += 1
        return checks

    return check
