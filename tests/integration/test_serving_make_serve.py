"""`make serve` itself: gunicorn's threaded workers with DEBUG off, WhiteNoise's hashed and
compressed static files, /api/docs with every Swagger UI asset found, compressed pages."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.integration.serving_support import PRODUCTION_KEY, ROOT, base_env, free_port

# `make serve` installs, migrates and compresses every static file before it answers: minutes
# on a busy machine, so `make test` runs these and `make test-fast` leaves them out.
pytestmark = pytest.mark.slow

STARTUP = 240  # migrate + collectstatic (compressing every asset) on a busy 2-core machine


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    folder = tmp_path_factory.mktemp("serve")
    port = free_port()
    cache = os.environ.get("CACHE_URL", "")
    log = folder / "serve.log"
    env = base_env(
        SECRET_KEY=PRODUCTION_KEY,
        ALLOWED_HOSTS="127.0.0.1",
        HOST="127.0.0.1",
        PORT=str(port),
        WEB_WORKERS="2",
        WEB_THREADS="4",
        STATIC_ROOT=str(folder / "static"),
        DATABASE_URL=f"sqlite:///{folder / 'db.sqlite3'}",
        CACHE_URL=cache if urlsplit(cache).scheme in {"redis", "rediss"} else "locmem://",
        LOG_FORMAT="json",
    )
    with log.open("w") as out:
        server = subprocess.Popen(
            ["make", "-s", "serve"],  # noqa: S607
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP
        while True:
            assert server.poll() is None, log.read_text()
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
        yield base, log
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)


def assets(page: str) -> list[str]:
    return re.findall(r'(?:href|src)="(/static/[^"]+)"', page)


def test_it_runs_gunicorn_threaded_workers_after_migrate_and_collectstatic(served: tuple[str, Path]) -> None:
    base, log = served
    # /healthz answers as soon as one worker is up; the second may still be booting.
    deadline = time.monotonic() + STARTUP
    while log.read_text().count("Booting worker with pid") < 2:
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)
    text = log.read_text()
    assert "Using worker: knowledgeweb.ops.gunicorn_worker.ApiJsonThreadWorker" in text
    assert text.count("Booting worker with pid") == 2
    assert httpx.get(f"{base}/readyz").json()["status"] == "ok"


def test_api_docs_work_with_debug_off_and_find_every_swagger_asset(served: tuple[str, Path]) -> None:
    base, _ = served
    page = httpx.get(f"{base}/api/docs")
    assert page.status_code == 200
    found = assets(page.text)
    names = {Path(url).name.split(".")[0] for url in found}
    assert {"swagger-ui", "swagger-ui-bundle", "swagger-ui-init"} <= names
    for url in found:
        # Hashed (manifest) names, cached for good.
        assert re.search(r"\.[0-9a-f]{12}\.\w+$", url), url
        response = httpx.get(base + url, headers={"Accept-Encoding": "gzip"})
        assert response.status_code == 200, url
        assert "immutable" in response.headers["Cache-Control"]
    bundle = next(url for url in found if "swagger-ui-bundle" in url)
    compressed = httpx.get(base + bundle, headers={"Accept-Encoding": "gzip"})
    assert compressed.headers["Content-Encoding"] == "gzip"
    assert int(compressed.headers["Content-Length"]) < len(compressed.content) / 2
    assert httpx.get(f"{base}/api/openapi.json").json()["info"]["title"] == "knowledgeweb API"


def test_pages_find_their_css_and_javascript_and_are_compressed(served: tuple[str, Path]) -> None:
    base, _ = served
    page = httpx.get(f"{base}/accounts/login/", headers={"Accept-Encoding": "gzip"})
    assert page.status_code == 200
    assert page.headers["Content-Encoding"] == "gzip"
    found = assets(page.text)
    assert any(url.endswith(".css") for url in found)
    for url in found:
        assert httpx.get(base + url).status_code == 200, url


def test_api_errors_are_json_and_every_response_names_its_request(served: tuple[str, Path]) -> None:
    base, log = served
    response = httpx.get(f"{base}/api/nowhere")
    assert response.status_code == 404
    assert response.json() == {"detail": "No API route matches GET /api/nowhere.", "code": "not_found"}
    request_id = response.headers["X-Request-ID"]
    # gunicorn writes the line after the response: wait for it (a bounded poll, not a guess).
    deadline = time.monotonic() + 30
    while f'"request_id": "{request_id}"' not in log.read_text():
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)


def test_cookies_are_secure_with_debug_off(served: tuple[str, Path]) -> None:
    base, _ = served
    cookie = httpx.get(f"{base}/accounts/login/").headers["Set-Cookie"]
    assert "Secure" in cookie
    assert "HttpOnly" in cookie
