"""Text the store can hold on every supported database."""

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


def unstorable_field(fields: dict[str, Any]) -> str | None:
    """``"<field> <reason>"`` for the first field holding text or JSON no database stores, else None."""
    for name, value in fields.items():
        reason = _text_problem(value) if isinstance(value, str) else _json_problem(value)
        if reason is not None:
            return f"{name} {reason}"
    return None


def _text_problem(text: str) -> str | None:
    found = _UNSTORABLE_CHARACTER.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        return "contains a NUL character (U+0000), which cannot be stored."
    return f"contains an unpaired surrogate (U+{ord(found.group()):04X}), which is not valid Unicode text."


def _json_problem(value: Any) -> str | None:
    # An explicit stack: a deeply nested artifact must not exhaust Python's recursion limit.
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            problem = _text_problem(item)
        elif isinstance(item, float) and not math.isfinite(item):
            problem = f"holds {json.dumps(item)}, which is not a JSON number."
        elif isinstance(item, dict):
            stack.extend(item.values())
            problem = next((p for key in item if isinstance(key, str) and (p := _text_problem(key))), None)
        elif isinstance(item, list | tuple):
            stack.extend(item)
            problem = None
        else:
            problem = None
        if problem is not None:
            return problem
    return None
