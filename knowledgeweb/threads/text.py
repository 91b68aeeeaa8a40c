"""Text the store can hold on every supported database."""

from __future__ import annotations

import json
from typing import Any

# PostgreSQL text and jsonb cannot hold U+0000; SQLite can. Refusing it everywhere
# keeps both databases storing exactly the same things.
_NUL = "\x00"


def nul_field(fields: dict[str, Any]) -> str | None:
    """The name of the first field whose text (or JSON) holds a NUL character, if any."""
    for name, value in fields.items():
        if isinstance(value, str):
            if _NUL in value:
                return name
        elif value is not None and "\\u0000" in json.dumps(value):
            return name
    return None
