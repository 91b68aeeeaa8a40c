"""The rules every upstream connection shares: its name, its base URL and the agent names it lists.

Knowledge bindings (``bindings/rules.py``) and answer models (``composer/rules.py``) both
call these, so the two cannot drift apart again. Every pattern is applied with
``fullmatch``: ``re.match`` anchors only the start, which once let an answer model be
named "bad name!", "x/../y" or 150 letters.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import urlsplit

#: A binding's or an answer model's name: it appears in URLs, API bodies and tool messages.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
NAME_RULE = "Use 1-100 letters, digits, '.', '_' or '-', starting with a letter or digit."
MAX_URL = 2048
MAX_AGENT_NAME = 100


def name_problem(name: object) -> str | None:
    """Why ``name`` may not name a binding or an answer model; ``None`` when it may."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        return NAME_RULE
    return None


def url_problem(base_url: str) -> str | None:
    """Why ``base_url`` may not be a connection's base URL; ``None`` when it may."""
    if len(base_url) > MAX_URL:
        return f"The base URL must be at most {MAX_URL} characters."
    if any(unicodedata.category(char) in {"Cc", "Zs", "Zl", "Zp"} for char in base_url):
        # urlsplit strips or keeps these silently; a URL with a space or a newline is a paste error.
        return "Enter a valid http:// or https:// URL (no spaces or control characters)."
    try:
        parts = urlsplit(base_url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError for a malformed port
    except ValueError:
        return "Enter a valid http:// or https:// URL."
    if parts.scheme not in {"http", "https"} or not host:
        return "Enter a valid http:// or https:// URL."
    if parts.username or parts.password:
        return "Do not put credentials in the URL; name an environment variable in 'API key env' instead."
    if parts.query or parts.fragment:
        return "The base URL must not have a query string or fragment."
    return None


def agent_names_problems(agent_names: object) -> list[str]:
    """Everything wrong with a list of agent names (empty when it is valid)."""
    if not isinstance(agent_names, list) or not all(isinstance(n, str) for n in agent_names):
        return ["Agent names must be a list of names."]
    problems: list[str] = []
    seen: set[str] = set()
    for agent_name in agent_names:
        if not agent_name.strip() or agent_name != agent_name.strip():
            problems.append(f"Agent name {agent_name!r} is blank or has surrounding spaces.")
        elif len(agent_name) > MAX_AGENT_NAME:
            problems.append(f"Agent name {agent_name[:20]!r}… is longer than {MAX_AGENT_NAME} characters.")
        elif any(unicodedata.category(char) == "Cc" for char in agent_name):
            # An agent announces its name in a header or a tool call; a control character
            # (a newline, NUL) can never match one and would corrupt logs.
            problems.append(f"Agent name {agent_name!r} contains a control character.")
        elif agent_name in seen:
            problems.append(f"Agent name {agent_name!r} is listed twice.")
        seen.add(agent_name)
    return problems
