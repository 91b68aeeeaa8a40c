"""gunicorn's configuration for ``make serve`` (``gunicorn -c python:knowledgeweb.ops.gunicorn_conf``).

Threaded workers (``gthread``): see ``knowledgeweb.ops.serving`` for the sizing rule.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from knowledgeweb.ops.serving import missing_settings, server_settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "knowledgeweb.settings")

# Started without make serve's own check: refuse the same way, in words, not a traceback.
for _problem in missing_settings():
    sys.stderr.write(f"gunicorn: {_problem} Nothing was started.\n")
if missing_settings():
    raise SystemExit(2)

_server = server_settings()

wsgi_app = "knowledgeweb.wsgi:application"
bind = [f"[{_server.host}]:{_server.port}" if ":" in _server.host else f"{_server.host}:{_server.port}"]
# gthread, answering gunicorn's own refusals under /api/ (414, 431, 400, 501) with the
# API's JSON and a request id (knowledgeweb/ops/gunicorn_worker.py).
worker_class = "knowledgeweb.ops.gunicorn_worker.ApiJsonThreadWorker"
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


def warn_about_database_connections(server: Any) -> None:
    """Warn when workers x threads could want more database connections than the database
    allows (knowledgeweb/ops/database.py, ``capacity_warning``)."""
    import django

    django.setup()
    from knowledgeweb.ops.database import check_capacity

    warning = check_capacity(workers=_server.workers, threads=_server.threads)
    if warning:
        server.log.warning(warning)


def rerender_in_the_background(server: Any) -> None:
    """Bring stored renders up to date in the background.

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


def when_ready(server: Any) -> None:
    """Once the server listens: check the database's room for connections, then re-render."""
    warn_about_database_connections(server)
    rerender_in_the_background(server)
