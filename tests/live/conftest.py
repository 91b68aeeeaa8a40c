"""Opt-in live checks against real provider servers (read-only queries, nothing written upstream).

Skipped unless the server's URL and key are set. Keys live in variables named like every
binding's key variable (``KNOWLEDGEWEB_KEY_...``) and are read through the same check:

- LightRAG: ``KNOWLEDGEWEB_LIVE_LIGHTRAG_URL``, ``KNOWLEDGEWEB_KEY_LIVE_LIGHTRAG`` (a server without
  a key ignores the header; use a long dummy value there, because the key's value is redacted
  wherever it appears, even inside retrieved text), optional ``KNOWLEDGEWEB_LIVE_LIGHTRAG_QUERY``.
- RAGFlow: ``KNOWLEDGEWEB_LIVE_RAGFLOW_URL``, ``KNOWLEDGEWEB_KEY_LIVE_RAGFLOW``, optional
  ``KNOWLEDGEWEB_LIVE_RAGFLOW_QUERY``.

The query must match indexed documents: each test requires at least one citable hit,
then checks every citation against the chunk text the server returned in that
same call, recorded at the transport.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from knowledgeweb.providers.client import transport_override
from knowledgeweb.providers.credentials import KEY_ENV_PREFIX, credential_from_environment


class RecordingTransport(httpx.BaseTransport):
    """The real network transport, keeping each response body for comparison."""

    def __init__(self) -> None:
        self._inner = httpx.HTTPTransport()
        self.exchanges: list[tuple[httpx.Request, int, Any]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self._inner.handle_request(request)
        body = response.read()
        response.close()
        try:
            decoded: Any = json.loads(body)
        except ValueError:
            decoded = None
        self.exchanges.append((request, response.status_code, decoded))
        return httpx.Response(response.status_code, headers=response.headers, content=body, request=request)

    def bodies(self, path_suffix: str) -> list[Any]:
        return [body for request, _, body in self.exchanges if request.url.path.endswith(path_suffix)]

    def close(self) -> None:
        self._inner.close()


def live_settings(provider: str) -> tuple[str, str, str]:
    """(url, key, query) for ``provider``, or skip the test."""
    prefix = f"KNOWLEDGEWEB_LIVE_{provider.upper()}"
    key_env = f"{KEY_ENV_PREFIX}LIVE_{provider.upper()}"
    url = os.environ.get(f"{prefix}_URL", "")
    if not url or not os.environ.get(key_env, "").strip():
        pytest.skip(f"set {prefix}_URL and {key_env} to run the live {provider} checks")
    key = credential_from_environment(key_env)
    return url, key, os.environ.get(f"{prefix}_QUERY", "What are the main topics of these documents?")


@pytest.fixture
def recording() -> Iterator[RecordingTransport]:
    transport = RecordingTransport()
    with transport_override(transport):
        yield transport
    transport.close()
