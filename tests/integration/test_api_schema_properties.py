"""Property-based API test: schemathesis drives the app's OpenAPI schema in-process.

Every operation of the API must never answer 5xx. The threads operations must
also conform to what the schema says (documented status codes, content types,
response bodies; invalid data rejected; valid data accepted).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import positive_data_acceptance

from knowledgeweb.api.main import api
from knowledgeweb.threads.models import Thread
from knowledgeweb.wsgi import application

# The schema the app serves at /api/openapi.json, built in-process; requests go to the WSGI app.
schema = schemathesis.openapi.from_dict(json.loads(json.dumps(api.get_openapi_schema(path_prefix="/api/"))))
schema.app = application

THREADS = "/api/threads"
# The import accepts any JSON list in the schema, then reads each message's shape itself,
# so that an error can name the message by its 1-based position.
SEMANTIC_VALIDATION = {("POST", "/api/threads/import")}


@pytest.fixture(autouse=True)
def wsgi_host(settings: Any) -> None:
    # schemathesis' in-process WSGI client sends Host: localhost.
    settings.ALLOWED_HOSTS = ["localhost", "testserver"]


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
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_generated_request_makes_the_api_fail(case: Any, api_token: str, thread: Thread) -> None:
    thread_id = case.path_parameters.get("thread_id") if case.path_parameters else None
    if thread_id is not None and _is_uuid(thread_id):
        # Random UUIDs only ever meet 404; aim well-formed ids at a real thread of the caller.
        case.path_parameters["thread_id"] = str(thread.id)
    # The app gzips responses; schemathesis' in-process WSGI client would not decode them.
    headers = {"Authorization": f"Bearer {api_token}", "Accept-Encoding": "identity"}
    operation = (case.method.upper(), case.operation.path)
    if not case.operation.path.startswith(THREADS):
        # Other areas' operations: held to the one rule every operation shares.
        case.call_and_validate(headers=headers, checks=[not_a_server_error])
    elif operation in SEMANTIC_VALIDATION:
        case.call_and_validate(headers=headers, excluded_checks=[positive_data_acceptance])
    else:
        case.call_and_validate(headers=headers)


def _is_uuid(value: object) -> bool:
    try:
        UUID(str(value))
    except ValueError:
        return False
    return True
