"""Log formatting: a request id on every line, JSON lines on request, no passwords.

``LOG_FORMAT=text`` (the default) writes ``time level logger [request id] message``;
``LOG_FORMAT=json`` writes one JSON object per line with the same fields plus any
structured extras (the request line's method, path, status, duration). Both pass
the finished line, traceback included, through ``redact()``.
"""

from __future__ import annotations

import json
import logging
import os
from contextvars import ContextVar
from datetime import UTC, datetime

from knowledgeweb.ops.redaction import redact

#: The id of the request this thread is serving ("-" outside a request).
current_request_id: ContextVar[str] = ContextVar("current_request_id", default="-")

#: Extras a record may carry that the JSON formatter writes as fields of their own.
_FIELDS = ("method", "path", "status", "duration_ms", "client")


class RequestIdFilter(logging.Filter):
    """Give every record the current request's id."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = current_request_id.get()
        return True


class RedactingFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        if not hasattr(record, "request_id"):
            record.request_id = current_request_id.get()
        return redact(super().format(record))


class JsonFormatter(logging.Formatter):
    """One JSON object per line."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, tz=UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None) or current_request_id.get(),
            "pid": os.getpid(),
        }
        for field in _FIELDS:
            if hasattr(record, field):
                entry[field] = getattr(record, field)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return redact(json.dumps(entry, ensure_ascii=False, default=str))
