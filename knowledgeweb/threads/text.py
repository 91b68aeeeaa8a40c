"""Text and JSON the store can hold on every supported database."""

from __future__ import annotations

import json
import math
import re
from typing import Any

# PostgreSQL text and jsonb cannot hold U+0000; SQLite can. Neither database
# driver can encode an unpaired surrogate (a JSON "\ud800" escape decodes to
# one), and neither JSON column accepts NaN or Infinity, which Python's JSON
# parser lets through. Refusing them everywhere keeps both databases storing
# exactly the same things, and turns what would be a database error into a
# clear refusal.
_UNSTORABLE_CHARACTER = re.compile("[\x00\ud800-\udfff]")
#: JSON (an artifact) may nest objects and lists this deep. Evidence needs three
#: levels; the bound keeps every reader, validator and serializer of it well clear
#: of recursion limits, and is the same for an append and an import.
MAX_JSON_DEPTH = 100


def unstorable_field(fields: dict[str, Any]) -> str | None:
    """``"<field> <reason>"`` for the first field holding text or JSON no database stores, else None."""
    for name, value in fields.items():
        if isinstance(value, str):
            reason = _text_problem(value)
        elif json_depth(value) > MAX_JSON_DEPTH:
            reason = f"is nested deeper than {MAX_JSON_DEPTH} levels."
        else:
            reason = _json_problem(value)
        if reason is not None:
            return f"{name} {reason}"
    return None


def json_depth(value: Any) -> int:
    """How many objects and lists nest in ``value`` (0 for a scalar).

    An explicit stack: a deeply nested artifact must not exhaust Python's recursion limit.
    """
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list | tuple):
            deepest = max(deepest, depth)
            if depth <= MAX_JSON_DEPTH:  # beyond the limit, how much deeper no longer matters
                stack.extend(
                    (child, depth + 1) for child in (item.values() if isinstance(item, dict) else item)
                )
    return deepest


def text_problem(text: str) -> str | None:
    """Why no database stores ``text`` ("contains a NUL character ..."), or None when it can."""
    return _text_problem(text)


def _text_problem(text: str) -> str | None:
    found = _UNSTORABLE_CHARACTER.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        return "contains a NUL character (U+0000), which cannot be stored."
    return f"contains an unpaired surrogate (U+{ord(found.group()):04X}), which is not valid Unicode text."


def _json_problem(value: Any) -> str | None:
    stack = [value]
    while stack:
        item = stack.pop()
        problem = None
        if isinstance(item, str):
            problem = _text_problem(item)
        elif isinstance(item, float) and not math.isfinite(item):
            problem = f"holds {json.dumps(item)}, which is not a JSON number."
        elif isinstance(item, dict):
            stack.extend(item.values())
            problem = next((p for key in item if isinstance(key, str) and (p := _text_problem(key))), None)
        elif isinstance(item, list | tuple):
            stack.extend(item)
        if problem is not None:
            return problem
    return None
