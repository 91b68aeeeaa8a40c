"""Who calls a tool: the user a personal API token names, and the agent name.

The token is checked exactly as the API checks it (``token_authenticate``, the same
refusal ``InvalidTokenError``), on every tool call: a token revoked while a host keeps
its connection open stops working at the next call, as it would on the next API request.

The agent name is not a credential (the API takes it from the request body); it picks
which of the user's bindings may serve the call. It is, in order: the host's explicit
setting (``--agent-name`` / ``KNOWLEDGEWEB_AGENT_NAME`` for stdio, the ``X-Agent-Name``
header over HTTP), else the ``clientInfo.name`` the MCP client announced, else empty.
A model never chooses it: it is not a tool argument.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User

from knowledgeweb.accounts.services import token_authenticate
from knowledgeweb.accounts.tokens import token_digest
from knowledgeweb.api.auth import InvalidTokenError

#: The header an HTTP host sets to name its agent (see the module docstring).
AGENT_HEADER = "x-agent-name"
#: The environment variables of the stdio server: the token, and the agent name.
TOKEN_ENV = "KNOWLEDGEWEB_TOKEN"  # noqa: S105 - the variable's name, not a token
AGENT_ENV = "KNOWLEDGEWEB_AGENT_NAME"


@dataclass(frozen=True)
class Caller:
    """The user and agent a tool call acts for."""

    user: User
    #: The token's stored digest: what a per-token rate limit counts by. Not a credential.
    token_key: str
    agent_name: str


def bearer_token(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or ``None`` without one."""
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip()


def token_user(raw_token: str) -> User:
    """The active user owning this active token; ``InvalidTokenError`` (401) otherwise."""
    user = token_authenticate(raw_token=raw_token)
    if user is None:
        raise InvalidTokenError()
    return user


def caller_authenticate(*, raw_token: str, agent_name: str) -> Caller:
    """Check the token now and name the caller."""
    return Caller(user=token_user(raw_token), token_key=token_digest(raw_token), agent_name=agent_name)


def agent_name_choose(*, explicit: str | None, client_name: str | None) -> str:
    """The host's explicit setting wins over the client's announced name."""
    if explicit:
        return explicit.strip()
    return (client_name or "").strip()
