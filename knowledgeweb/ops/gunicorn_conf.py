"""gunicorn's configuration for ``make serve`` (``gunicorn -c python:knowledgeweb.ops.gunicorn_conf``).

Threaded workers (``gthread``): see ``knowledgeweb.ops.serving`` for the sizing rule.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from knowledgeweb.ops.serving import server_settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "knowledgeweb.settings")
# A fixed pool of threads: keep each thread's database connection between requests.
os.environ.setdefault("DB_CONN_MAX_AGE", "60")

_server = server_settings()

wsgi_app = "knowledgeweb.wsgi:application"
bind = [f"[{_server.host}]:{_server.port}" if ":" in _server.host else f"{_server.host}:{_server.port}"]
worker_class = "gthread"
workers = _server.workers
threads = _server.threads
timeout = _server.timeout
graceful_timeout = _server.graceful_timeout
keepalive = 5
# Our middleware writes one line per request with its id; gunicorn's access log would repeat it.
accesslog = None
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info").lower()
# Whether a request came over HTTPS is Django's decision, from the opt-in
# SECURE_PROXY_SSL_HEADER; gunicorn must not trust X-Forwarded-Proto on its own.
secure_scheme_headers: dict[str, str] = {}
# gunicorn's control socket lives at one fixed path per user: a second server on the
# same machine (a load test beside a running one) would take it over. Not needed here.
control_socket_disable = True


def when_ready(server: Any) -> None:
    """Once the server listens: bring stored renders up to date in the background.

    The server answers at once with the renders as stored (reads never write; a render
    below the minimum safe version is rendered per response), while ``manage.py rerender``
    replaces the older ones thread by thread, its progress in this log. Set
    ``RERENDER_AFTER_START=0`` to leave that to another process (the deploy's own step).
    """
    if os.environ.get("RERENDER_AFTER_START", "1") == "0":
        return
    manage = Path(__file__).resolve().parents[2] / "manage.py"
    # Not waited for: gunicorn's arbiter reaps any child that exits, so it leaves no zombie.
    process = subprocess.Popen([sys.executable, str(manage), "rerender"], cwd=manage.parent)  # noqa: S603
    server.log.info("Re-rendering stored renders in the background (pid %s)", process.pid)
