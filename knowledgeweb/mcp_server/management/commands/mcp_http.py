"""``manage.py mcp_http``: serve the MCP tools over Streamable HTTP (uvicorn, one process)."""

from __future__ import annotations

import socket
from typing import Any

import uvicorn
from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledgeweb.environment import env_str
from knowledgeweb.mcp_server.http import MCP_PATH, build_app


class Command(BaseCommand):
    help = (
        "Serve the MCP tools over Streamable HTTP at /mcp. Listens on MCP_HOST:MCP_PORT "
        "(default 127.0.0.1:8001); port 0 picks a free port, printed on start."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=env_str("MCP_HOST") or "127.0.0.1")
        parser.add_argument("--port", type=int, default=None, help="Default: MCP_PORT, else 8001.")

    def handle(self, *args: Any, **options: Any) -> None:
        port = options["port"]
        if port is None:
            raw = env_str("MCP_PORT") or "8001"
            if not raw.isdigit():
                raise CommandError(f"MCP_PORT must be a port number, not {raw!r}.")
            port = int(raw)
        host = options["host"]
        try:
            # Bound here, not by uvicorn, so that port 0 can be reported before serving.
            sock = socket.create_server((host, port))
        except OSError as exc:
            raise CommandError(f"Cannot listen on {host}:{port}: {exc.strerror or exc}.") from None
        bound_host, bound_port = sock.getsockname()[:2]
        config = uvicorn.Config(
            build_app(),
            lifespan="on",
            # Django's LOGGING stays in charge; the guard writes one line per request.
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=5,
        )
        self.stdout.write(f"MCP (Streamable HTTP) listening on http://{bound_host}:{bound_port}{MCP_PATH}")
        self.stdout.flush()
        uvicorn.Server(config).run(sockets=[sock])
