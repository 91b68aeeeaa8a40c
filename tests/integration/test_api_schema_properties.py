"""Property-based API test: schemathesis drives the app's OpenAPI schema in-process.

Every operation is held to every check: never a 5xx, documented status codes, content
types and bodies, invalid data rejected, valid data accepted (the import excepted: it reads
each message's shape itself, so that an error can name the message). A stateful run chains
calls through the document's links (a new thread's id into every operation on a thread),
adding the checks of sequences: a deleted thread is gone, a created one is there. The
examples are bounded so the run stays short.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest
import schemathesis
from django.contrib.auth.models import User
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from knowledgeweb.api.main import api
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.threads.models import Thread
from knowledgeweb.wsgi import application

# The schema the app serves at /api/openapi.json, built in-process; requests go to the WSGI app.
schema = schemathesis.openapi.from_dict(json.loads(json.dumps(api.get_openapi_schema(path_prefix="/api/"))))
schema.app = application

# The import accepts any JSON list in the schema, then reads each message's shape itself,
# so that an error can name the message by its 1-based position.
SEMANTIC_VALIDATION = {("POST", "/api/threads/import")}
# An append's tool calls and parts are read as the import reads them (their forms, and which
# message types may carry them, are the reader's): valid data is held to acceptance unless
# the generated body holds either.
APPEND = ("POST", "/api/threads/{thread_id}/messages")
# A query mode or a dataset selection is valid for some providers and refused by others
# (documented per provider in `mode` and `scope`): which one a search meets is the
# binding's, not the document's. Valid data is held to acceptance but for those refusals.
BINDING_DEPENDENT = {("POST", "/api/knowledge/search"), ("POST", "/api/threads/{thread_id}/ask")}
BINDING_REFUSALS = {"mode_not_supported", "mode_not_allowed", "scope_not_supported"}
ACCEPTED = set(range(200, 400)) | {401, 403, 404, 409, 429}


@pytest.fixture(autouse=True)
def wsgi_host(settings: Any) -> None:
    # schemathesis' in-process WSGI client sends Host: localhost.
    settings.ALLOWED_HOSTS = ["localhost", "testserver"]
    # Thousands of generated requests would meet the rate limits (a 429 where a check wants
    # 401 for a bad token); the limits have tests of their own.
    settings.RATE_LIMITS = {}


@pytest.fixture
def local_binding(user: User) -> None:
    # A search or a question that names no binding uses this one: requests reach the service.
    binding_create(name="local", provider="local", tools=["knowledge_search"], users=[user])


@pytest.fixture(autouse=True)
def keep_the_test_connection() -> Iterator[None]:
    # As Django's own test client does: a request must not close the connection that
    # holds the test's transaction (PostgreSQL runs with CONN_MAX_AGE).
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.mark.django_db
@schema.parametrize()
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_generated_request_makes_the_api_fail(
    case: Any, api_token: str, thread: Thread, local_binding: None
) -> None:
    thread_id = case.path_parameters.get("thread_id") if case.path_parameters else None
    if thread_id is not None and _is_uuid(thread_id):
        # Random UUIDs only ever meet 404; aim well-formed ids at a real thread of the caller.
        case.path_parameters["thread_id"] = str(thread.id)
    # The app gzips responses; schemathesis' in-process WSGI client would not decode them.
    headers = {"Authorization": f"Bearer {api_token}", "Accept-Encoding": "identity"}
    operation = (case.method.upper(), case.operation.path)
    if _semantic(case):
        case.call_and_validate(headers=headers, excluded_checks=[positive_data_acceptance])
    elif operation in BINDING_DEPENDENT:
        response = case.call_and_validate(headers=headers, excluded_checks=[positive_data_acceptance])
        _valid_data_accepted_unless_the_binding_refuses(case, response)
    else:
        case.call_and_validate(headers=headers)


def _valid_data_accepted_unless_the_binding_refuses(case: Any, response: Any) -> None:
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code in ACCEPTED:
        return
    code = response.json().get("code")
    assert code in BINDING_REFUSALS, (response.status_code, response.text[:500])


def _semantic(case: Any) -> bool:
    """Whether the operation reads part of this body's shape itself (see SEMANTIC_VALIDATION)."""
    operation = (case.method.upper(), case.operation.path)
    if operation in SEMANTIC_VALIDATION:
        return True
    body = case.body if isinstance(case.body, dict) else {}
    return operation == APPEND and bool(body.get("tool_calls") or body.get("parts"))


def _is_uuid(value: object) -> bool:
    try:
        UUID(str(value))
    except ValueError:
        return False
    return True


# --- stateful: sequences of calls, following the document's links ----------------------

# Checks that need a whole sequence: a deleted thread answers 404 (use after free), a
# created one can be read (resource availability); with every per-response check besides.
STATEFUL_SETTINGS = settings(
    max_examples=8,
    stateful_step_count=6,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)


def test_sequences_of_calls_follow_the_links_and_pass_every_check(api_token: str, settings: Any) -> None:
    headers = {"Authorization": f"Bearer {api_token}", "Accept-Encoding": "identity"}
    linked: list[tuple[str, str, int]] = []

    class Workflow(schema.as_state_machine()):  # type: ignore[misc]
        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {"headers": headers}

        def after_call(self, response: Any, case: Any) -> None:
            if "{thread_id}" in case.operation.path:
                linked.append((case.method.upper(), case.operation.path, response.status_code))

        def validate_response(self, response: Any, case: Any, **kwargs: Any) -> None:
            excluded = [positive_data_acceptance] if _semantic(case) else []
            case.validate_response(response, excluded_checks=excluded, headers=headers)

    Workflow.run(settings=STATEFUL_SETTINGS)

    # The links were followed: operations on a thread reached threads the sequence created.
    assert any(status < 300 for _, _, status in linked), linked
