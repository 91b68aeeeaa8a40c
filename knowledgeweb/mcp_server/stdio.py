"""The stdio transport: one host process, one user, the token from the environment.

The SDK's own stdio transport reads stdin as text with ``errors="replace"`` (invalid
UTF-8 becomes U+FFFD and is stored as such), reads a whole line into memory before
anything can look at its size, and answers a line that is not JSON-RPC with nothing.
This transport holds stdio to what the HTTP transport holds its bodies to:

- a line (one JSON-RPC message) of more than ``DATA_UPLOAD_MAX_MEMORY_SIZE`` bytes is
  refused while it is read: at most that many bytes plus one are ever held, the rest
  is read and dropped up to its newline, and the client gets an Invalid Request error;
- a line that is not valid UTF-8 is refused with a Parse error, never repaired;
- a line that is not JSON gets a Parse error (-32700), JSON that is not a JSON-RPC
  message an Invalid Request error (-32600, with the message's id when it had one).

Each error's ``data`` is the API's error body (``detail``, ``code``, ``status``), as a
refused tool call's is; nothing reaches the server, so nothing is written. Blank lines
are skipped. While serving, file descriptors 0 and 1 point at the null device and at
stderr, so nothing else in the process can read the wire or write on it.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import IO, Any

import anyio
import anyio.to_thread
import mcp_types as types
from django.conf import settings
from mcp.server.context import ServerRequestContext
from mcp.shared._context_streams import ContextReceiveStream, ContextSendStream, create_context_streams
from mcp.shared.message import SessionMessage

from knowledgeweb.mcp_server.identity import Caller, agent_name_choose, caller_authenticate
from knowledgeweb.mcp_server.server import CallerSource, build_server, client_name

logger = logging.getLogger(__name__)

#: Bytes read at a time while a line over the limit is dropped.
_DRAIN_CHUNK = 64 * 1024


def package_version() -> str:
    try:
        return version("knowledgeweb")
    except PackageNotFoundError:
        return ""


def stdio_caller_source(*, raw_token: str, agent_name: str | None) -> CallerSource:
    """The caller of every call on this connection: the token's user, checked again at each
    call (so revoking the token takes effect at once, as for the API), and the agent."""

    def caller_source(ctx: ServerRequestContext[Any, Any]) -> Caller:
        agent = agent_name_choose(explicit=agent_name, client_name=client_name(ctx))
        return caller_authenticate(raw_token=raw_token, agent_name=agent)

    return caller_source


@dataclass(frozen=True)
class Line:
    """One line of stdin: its bytes (without the newline), or only its size when too long."""

    data: bytes
    too_long: bool = False
    size: int = 0


def read_line(stream: IO[bytes], limit: int) -> Line | None:
    """The next line of at most ``limit`` bytes (``None`` at the end of input).

    Never holds more than ``limit + 1`` bytes: a longer line is read on to its newline
    in small pieces that are dropped.
    """
    data = stream.readline(limit + 1)
    if not data:
        return None
    if data.endswith(b"\n"):
        return Line(data.rstrip(b"\r\n"))
    if len(data) <= limit:
        return Line(data)  # the last line, without a newline
    size = len(data)
    while True:
        piece = stream.readline(_DRAIN_CHUNK)
        size += len(piece)
        if not piece or piece.endswith(b"\n"):
            return Line(b"", too_long=True, size=size - (1 if piece.endswith(b"\n") else 0))


class LineRefusedError(Exception):
    """A line that is not a JSON-RPC message this server will take."""

    def __init__(
        self, rpc_code: int, message: str, body: dict[str, Any], request_id: str | int | None
    ) -> None:
        super().__init__(message)
        self.error = types.JSONRPCError(
            jsonrpc="2.0",
            id=request_id,
            error=types.ErrorData(code=rpc_code, message=message, data=body),
        )


def parse_line(line: Line, limit: int) -> types.JSONRPCMessage | None:
    """The message on ``line`` (``None`` for a blank line), or ``LineRefusedError``."""
    if line.too_long:
        detail = f"The message is larger than the limit of {limit} bytes. Nothing was read or written."
        raise LineRefusedError(
            types.INVALID_REQUEST, detail, {"detail": detail, "code": "body_too_large", "status": 413}, None
        )
    try:
        text = line.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        detail = f"The message is not valid UTF-8 (byte {exc.start}). Nothing was written."
        raise LineRefusedError(
            types.PARSE_ERROR,
            "Parse error: " + detail,
            {"detail": detail, "code": "invalid_utf8", "status": 400},
            None,
        ) from None
    if not text.strip():
        return None
    try:
        decoded = json.loads(text)
    except json.JSONDecodeError as exc:
        detail = f"The message is not JSON ({exc.msg} at character {exc.pos}). Nothing was written."
        raise LineRefusedError(
            types.PARSE_ERROR,
            "Parse error: " + detail,
            {"detail": detail, "code": "invalid_json", "status": 400},
            None,
        ) from None
    try:
        return types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValueError:
        request_id = decoded.get("id") if isinstance(decoded, dict) else None
        if isinstance(request_id, bool) or not isinstance(request_id, str | int):
            request_id = None
        detail = "The message is not a JSON-RPC 2.0 request, notification or response. Nothing was written."
        raise LineRefusedError(
            types.INVALID_REQUEST,
            "Invalid Request: " + detail,
            {"detail": detail, "code": "invalid_request", "status": 400},
            request_id,
        ) from None


def _claim_wire() -> tuple[IO[bytes], IO[bytes]]:
    """Private copies of stdin and stdout for the protocol; fd 0 then reads the null device
    and fd 1 writes to stderr, so a stray print or child process cannot touch the wire."""
    wire_in = os.fdopen(os.dup(0), "rb")
    wire_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdout.flush()
    os.dup2(2, 1)
    return wire_in, wire_out


@asynccontextmanager
async def bounded_stdio(
    wire_in: IO[bytes], wire_out: IO[bytes], *, limit: int
) -> AsyncIterator[
    tuple[ContextReceiveStream[SessionMessage | Exception], ContextSendStream[SessionMessage]]
]:
    """The server's read and write streams over ``wire_in`` / ``wire_out`` (see the module)."""
    read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
    write_stream, write_reader = create_context_streams[SessionMessage](0)
    refusals = write_stream.clone()

    async def reader() -> None:
        async with read_writer, refusals:
            while True:
                line = await anyio.to_thread.run_sync(read_line, wire_in, limit, abandon_on_cancel=True)
                if line is None:
                    return
                try:
                    message = parse_line(line, limit)
                except LineRefusedError as refused:
                    logger.warning("mcp stdio line refused: %s", refused.error.error.data["code"])
                    await refusals.send(SessionMessage(refused.error))
                    continue
                if message is not None:
                    await read_writer.send(SessionMessage(message))

    async def writer() -> None:
        async with write_reader:
            async for session_message in write_reader:
                payload = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await anyio.to_thread.run_sync(_write_line, wire_out, payload.encode("utf-8"))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(reader)
        tasks.start_soon(writer)
        yield read_stream, write_stream


def _write_line(wire_out: IO[bytes], payload: bytes) -> None:
    wire_out.write(payload + b"\n")
    wire_out.flush()


async def serve_stdio(*, raw_token: str, agent_name: str | None) -> None:
    """Serve MCP on stdin/stdout until the host closes stdin."""
    source = stdio_caller_source(raw_token=raw_token, agent_name=agent_name)
    server = build_server(caller_source=source, version=package_version())
    wire_in, wire_out = _claim_wire()
    limit = int(settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 2 * 1024 * 1024)
    async with bounded_stdio(wire_in, wire_out, limit=limit) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
