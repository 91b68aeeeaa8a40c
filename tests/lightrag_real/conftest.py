"""A real LightRAG 1.5.7 server for the tests in this folder, set up once per test run.

The session fixture builds or reuses the cached installation (``installation.py``), starts
the stand-in model server and ``lightrag-server`` on free loopback ports, inserts the
corpus in ``corpus/`` and waits until it is indexed; at the end it stops both by process
id. When the installation cannot be built (no registry, no npm) every test here FAILS with
the reason: nothing is skipped.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.services import binding_create
from knowledgeweb.providers.client import transport_override
from tests.lightrag_real.installation import LIGHTRAG_VERSION, Installation, InstallError, prepare
from tests.lightrag_real.servers import (
    LightragServer,
    Process,
    ServerError,
    corpus,
    insert_corpus,
    start_lightrag,
    start_standin,
)
from tests.live.conftest import RecordingTransport

#: The binding's key variable; named with the prefix bindings will require (``KNOWLEDGEWEB_KEY_``).
KEY_ENV = "KNOWLEDGEWEB_KEY_LIGHTRAG_TEST"
#: Long and unlike any corpus text: the key's value is redacted wherever it appears.
API_KEY = "lightrag-real-test-key-7c41e0b95d"
TOOLS = ["knowledge_search", "entity_relations_search"]


class RealLightrag:
    """The running pair: the server under test and the stand-in model behind it."""

    def __init__(
        self, installation: Installation, server: LightragServer, standin: Process, model_url: str
    ) -> None:
        self.installation = installation
        self.server = server
        self.standin = standin
        self.model_url = model_url

    def start_copy(self, workdir: Path) -> LightragServer:
        """A second server on a copy of the indexed storage (for tests that stop their server)."""
        workdir.mkdir(parents=True)
        shutil.copytree(self.server.workdir / "rag_storage", workdir / "rag_storage")
        copy = start_lightrag(self.installation, workdir, model_url=self.model_url, api_key=API_KEY)
        copy.documents = dict(self.server.documents)
        return copy


@pytest.fixture(scope="session")
def real_lightrag(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealLightrag]:
    try:
        installation = prepare()
    except InstallError as error:
        pytest.fail(
            f"LightRAG {LIGHTRAG_VERSION} could not be installed for the real-server tests: {error}",
            pytrace=False,
        )
    workdir = tmp_path_factory.mktemp("lightrag")
    standin: Process | None = None
    server: LightragServer | None = None
    try:
        standin, model_url = start_standin(workdir)
        server = start_lightrag(installation, workdir / "server", model_url=model_url, api_key=API_KEY)
        insert_corpus(server, corpus())
    except BaseException as error:
        # Whatever went wrong, nothing started here outlives the set-up.
        for process in (server.process if server else None, standin):
            if process is not None:
                process.stop()
        if isinstance(error, ServerError):
            pytest.fail(
                f"The real LightRAG {LIGHTRAG_VERSION} server could not be prepared: {error}", pytrace=False
            )
        raise
    try:
        yield RealLightrag(installation, server, standin, model_url)
    finally:
        server.process.stop()
        standin.stop()


@pytest.fixture
def lightrag_server(real_lightrag: RealLightrag) -> LightragServer:
    assert real_lightrag.server.process.running(), "the session's lightrag-server has stopped"
    return real_lightrag.server


@pytest.fixture
def binding(lightrag_server: LightragServer, user: User, monkeypatch: pytest.MonkeyPatch) -> KnowledgeBinding:
    """A LightRAG binding to the real server, its key in ``KNOWLEDGEWEB_KEY_LIGHTRAG_TEST``."""
    monkeypatch.setenv(KEY_ENV, API_KEY)
    return binding_create(
        name="lightrag-real",
        provider="lightrag",
        base_url=lightrag_server.base_url,
        api_key_env=KEY_ENV,
        tools=TOOLS,
        users=[user],
        top_k=10,
        timeout=30,
    )


@pytest.fixture
def recording() -> Iterator[RecordingTransport]:
    """The real network transport behind the client factory, keeping each answer for comparison."""
    transport = RecordingTransport()
    with transport_override(transport):
        yield transport
    transport.close()


@pytest.fixture
def reader(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client
