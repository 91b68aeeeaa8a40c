"""``manage.py mcp_server``: serve the MCP tools over stdio for the user the token names."""

from __future__ import annotations

import os
from typing import Any

import anyio
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connections
from ninja.errors import AuthenticationError

from knowledgeweb.mcp_server.identity import AGENT_ENV, TOKEN_ENV, token_user
from knowledgeweb.mcp_server.stdio import serve_stdio


class Command(BaseCommand):
    help = (
        f"Serve the MCP tools over stdio (an MCP host starts this). The personal API token is read from "
        f"{TOKEN_ENV}; the agent name from --agent-name, {AGENT_ENV}, or the client's announced name."
    )
    # stdout is the protocol's wire: nothing but JSON-RPC may be written to it.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--agent-name",
            default=None,
            help=f"The agent name bindings are matched against (default: {AGENT_ENV}, then the client's name).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        raw_token = os.environ.get(TOKEN_ENV, "").strip()
        if not raw_token:
            raise CommandError(
                f"{TOKEN_ENV} is not set: put a personal API token (manage.py create_token USER) "
                "in the MCP host's environment for this server."
            )
        try:
            # Fail at start-up, where the host shows the reason, rather than at the first call.
            token_user(raw_token)
        except AuthenticationError as exc:
            raise CommandError(f"{TOKEN_ENV}: {exc.message}") from None
        finally:
            connections.close_all()
        agent_name = options["agent_name"] or os.environ.get(AGENT_ENV) or None
        anyio.run(lambda: serve_stdio(raw_token=raw_token, agent_name=agent_name))
