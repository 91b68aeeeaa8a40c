"""Field bounds of the two wire forms (docs/contract.md#source-records), in one place."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

MAX_RECORDS = 100
MAX_TITLE = 1024
MAX_EXCERPT = 200_000
MAX_URL = 2048
MAX_PAGE = 1_000_000
MAX_LOCATOR = 256
MAX_PAGES = 100

PROVIDER_RE = re.compile(r"[a-z][a-z0-9_.-]{0,63}")
SHARED_ID_RE = re.compile(r"[a-f0-9]{32}")
NATIVE_ID_RE = re.compile(r"[a-f0-9]{32}-[1-9][0-9]{0,2}")

SHARED_VERSION = 1
NATIVE_VERSION = 1

#: Tools whose native RAGFlow snapshots readers accept (docs/contract.md#reading-evidence).
NATIVE_TOOLS = frozenset({"knowledge_search", "task"})

#: Appended to an excerpt that ``format_result`` shortened; readers use it for the truncation note.
TRUNCATION_MARK = " […]"


def is_text(value: object, max_length: int) -> bool:
    """A non-blank string of 1..max_length characters."""
    return isinstance(value, str) and 0 < len(value) <= max_length and not value.isspace()


def is_page(value: object) -> bool:
    """An integer page 1..1000000 (``bool`` is not an integer here)."""
    return type(value) is int and 1 <= value <= MAX_PAGE


def is_version(value: object, expected: int) -> bool:
    return type(value) is int and value == expected


def is_http_url(value: object) -> bool:
    """A real ``http://`` or ``https://`` URL with a host, at most 2048 characters."""
    if not isinstance(value, str) or len(value) > MAX_URL or any(ch.isspace() for ch in value):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return (
        parts.scheme in {"http", "https"} and bool(parts.hostname) and value.startswith(parts.scheme + "://")
    )
