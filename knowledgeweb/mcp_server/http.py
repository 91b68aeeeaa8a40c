"""The Streamable HTTP transport: the SDK's session manager behind a guard that enforces
what the API enforces.

Served by its own ASGI process (``manage.py mcp_http``, uvicorn), not mounted in the WSGI
app: Streamable HTTP keeps sessions and their tasks in one event loop for their whole life,
which a WSGI worker (one thread per request, several processes) cannot host.

The guard (``McpGuard``), in order, for every HTTP request:

1. a request id, returned in ``X-Request-ID`` and written in the request's log line
   (method, path, status, duration, user);
2. only ``/mcp`` is served (404 otherwise);
3. ``Host`` must match ``ALLOWED_HOSTS``, with Django's own rule (400 otherwise);
4. ``Origin``, when sent, must be one of ``MCP_ALLOWED_ORIGINS`` (403 otherwise): a web
   page reached through DNS rebinding carries its own origin, which is never allowed;
5. a personal API token, checked as the API checks it (401 with ``WWW-Authenticate``);
   a refused token is counted against the client address (``limits.failed_token_check``);
6. a POST carries JSON, and its body is at most the API's limit (413 otherwise, also for
   chunked bodies without a length).

Every refusal is the API's JSON ``{"detail": ..., "code": ...}``; an unexpected error is a
JSON 500 whose traceback goes to the log only. The authenticated user is handed to the
SDK as the request's principal, so a session can only be used with the user that opened
it (the SDK answers anyone else as if the session did not exist).
"""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from uuid import uuid4

import anyio.to_thread
from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import RequestDataTooBig
from django.db import close_old_connections, connections
from django.http.request import split_domain_port, validate_host
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from ninja.errors import AuthenticationError
from starlette.applications import Starlette
from starlette.datastructures import Headers, MutableHeaders
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from knowledgeweb.accounts.tokens import token_digest
from knowledgeweb.environment import env_list
from knowledgeweb.mcp_server import limits
from knowledgeweb.mcp_server.errors import INTERNAL_ERROR, error_body, is_internal
from knowledgeweb.mcp_server.identity import (
    AGENT_HEADER,
    Caller,
    agent_name_choose,
    bearer_token,
    token_user,
)
from knowledgeweb.mcp_server.server import build_server, client_name
from knowledgeweb.mcp_server.stdio import package_version
from knowledgeweb.ops.ratelimit import RateLimited

logger = logging.getLogger(__name__)

MCP_PATH = "/mcp"
#: Where the guard leaves the caller for the tool handlers, in the ASGI scope.
_CALLER_SCOPE_KEY = "knowledgeweb.caller"
_MISSING_TOKEN = "Authentication required: send 'Authorization: Bearer <token>' (manage.py create_token)."  # noqa: S105 - a message


def allowed_origins() -> frozenset[str]:
    """``MCP_ALLOWED_ORIGINS``: exact origins (``https://host[:port]``) a browser may call from."""
    return frozenset(origin.rstrip("/").lower() for origin in env_list("MCP_ALLOWED_ORIGINS", default=[]))


def host_allowed(host: str | None) -> bool:
    """Django's own Host rule (``HttpRequest.get_host``), so both servers accept the same names."""
    if not host:
        return False
    hosts = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not hosts:
        hosts = [".localhost", "127.0.0.1", "[::1]"]
    domain, _ = split_domain_port(host)
    return bool(domain) and validate_host(domain, hosts)


def http_caller(ctx: ServerRequestContext[Any, Any]) -> Caller:
    """The caller the guard authenticated for the HTTP request that carried this message."""
    request = ctx.request
    scope = getattr(request, "scope", None)
    if not isinstance(scope, dict) or _CALLER_SCOPE_KEY not in scope:
        raise AuthenticationError()
    user, token_key, explicit_agent = scope[_CALLER_SCOPE_KEY]
    agent = agent_name_choose(explicit=explicit_agent, client_name=client_name(ctx))
    return Caller(user=user, token_key=token_key, agent_name=agent)


def _authenticate(raw_token: str, client_address: str) -> User:
    close_old_connections()
    try:
        # A token that matches is always accepted; only a refused one is counted.
        return token_user(raw_token)
    except AuthenticationError:
        limits.failed_token_check(client_address=client_address)
        raise
    finally:
        connections.close_all()  # see server._in_worker


async def _respond(
    send: Send, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
) -> None:
    payload = {key: value for key, value in body.items() if key != "status"}
    content = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    raw_headers = [
        (b"content-type", b"application/json; charset=utf-8"),
        (b"content-length", str(len(content)).encode("ascii")),
    ]
    raw_headers += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": content})


class _Refused(Exception):  # noqa: N818 - a control-flow signal inside the guard
    def __init__(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        super().__init__(status)
        self.status = status
        self.body = body
        self.headers = headers


def _refusal(exc: Exception) -> _Refused:
    body = error_body(exc)
    headers = {"WWW-Authenticate": 'Bearer realm="knowledgeweb"'} if body["status"] == 401 else None
    if isinstance(exc, RateLimited):
        headers = {"Retry-After": str(exc.retry_after)}
    return _Refused(body["status"], body, headers)


class McpGuard:
    """ASGI middleware in front of the SDK's app; see the module docstring for its checks."""

    def __init__(self, app: ASGIApp, *, origins: frozenset[str]) -> None:
        self.app = app
        self.origins = origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            return  # no websockets here
        request_id = uuid4().hex
        started = time.monotonic()
        status: list[int] = []
        user_id: list[int] = []

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
                MutableHeaders(scope=message).append("X-Request-ID", request_id)
            await send(message)

        try:
            receive = await self._admit(scope, receive, user_id)
            await self.app(scope, receive, send_with_id)
        except _Refused as refused:
            await _respond(send_with_id, refused.status, refused.body, refused.headers)
        except Exception:
            logger.exception("MCP HTTP request %s failed", request_id)
            if not status:
                await _respond(send_with_id, 500, INTERNAL_ERROR)
        finally:
            logger.info(
                "mcp_http method=%s path=%s status=%s duration_ms=%.1f request_id=%s user=%s",
                scope.get("method"),
                scope.get("path"),
                status[0] if status else "-",
                (time.monotonic() - started) * 1000,
                request_id,
                user_id[0] if user_id else "-",
            )

    async def _admit(self, scope: Scope, receive: Receive, user_id: list[int]) -> Receive:
        """Refuse the request (``_Refused``) or hand back its body, read and checked."""
        headers = Headers(scope=scope)
        if scope["path"] != MCP_PATH:
            raise _Refused(
                404, {"detail": f"Not found: the MCP endpoint is {MCP_PATH}.", "code": "not_found"}
            )
        host = headers.get("host")
        if not host_allowed(host):
            raise _Refused(400, {"detail": f"Host {host!r} is not in ALLOWED_HOSTS.", "code": "host_refused"})
        origin = headers.get("origin")
        if origin is not None and origin.rstrip("/").lower() not in self.origins:
            raise _Refused(
                403,
                {
                    "detail": f"Origin {origin!r} may not call this server; allowed origins are set "
                    "with MCP_ALLOWED_ORIGINS.",
                    "code": "origin_refused",
                },
            )
        raw_token = bearer_token(headers.get("authorization"))
        if not raw_token:
            raise _Refused(
                401,
                {"detail": _MISSING_TOKEN, "code": "unauthenticated"},
                {"WWW-Authenticate": 'Bearer realm="knowledgeweb"'},
            )
        client = scope.get("client")
        address = str(client[0]) if client else ""
        try:
            user = await anyio.to_thread.run_sync(_authenticate, raw_token, address)
        except Exception as exc:
            refused = _refusal(exc)
            if is_internal(refused.body):
                raise
            raise refused from None
        user_id.append(user.pk)
        if scope["method"] == "POST":
            content_type = headers.get("content-type", "")
            if not content_type.lower().startswith("application/json"):
                raise _Refused(
                    400,
                    {
                        "detail": "A POST must carry 'Content-Type: application/json'.",
                        "code": "invalid_request",
                    },
                )
            receive = await _read_body(headers, receive)
        scope["user"] = AuthenticatedUser(
            AccessToken(token="", client_id=f"knowledgeweb-user-{user.pk}", scopes=[], subject=str(user.pk))
        )
        scope[_CALLER_SCOPE_KEY] = (user, token_digest(raw_token), headers.get(AGENT_HEADER))
        return receive


async def _read_body(headers: Headers, receive: Receive) -> Receive:
    """Read the whole body, refusing it past the API's limit (declared or counted)."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    too_big = _refusal(RequestDataTooBig("over the limit"))
    declared = headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise too_big
    body = bytearray()
    trailing: deque[Message] = deque()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            trailing.append(message)
            break
        body.extend(message.get("body", b""))
        if len(body) > limit:
            raise too_big
        if not message.get("more_body", False):
            break
    replay: deque[Message] = deque([{"type": "http.request", "body": bytes(body), "more_body": False}])
    replay.extend(trailing)

    async def replayed() -> Message:
        return replay.popleft() if replay else await receive()

    return replayed


def build_app() -> McpGuard:
    """The ASGI application ``manage.py mcp_http`` serves."""
    server = build_server(caller_source=http_caller, version=package_version())
    manager = StreamableHTTPSessionManager(
        app=server,
        # One JSON answer per POST: no stream to hold open, and errors stay plain JSON.
        json_response=True,
        max_request_body_size=settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    starlette = Starlette(
        routes=[Route(MCP_PATH, endpoint=StreamableHTTPASGIApp(manager))], lifespan=lifespan
    )
    return McpGuard(starlette, origins=allowed_origins())
