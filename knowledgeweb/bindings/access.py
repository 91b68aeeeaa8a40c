"""Who may use a binding or an answer model, and where: the agent-name rule and its summary in words.

Web pages (Ask, follow-ups) send no agent name. An agent list therefore shuts the
browser out unless the admin also ticks "usable in the browser"; the summary says
so before the admin saves (docs/decisions/0040-admins-who-cannot-save-a-dead-configuration.md).
Plain Python: the retrieval authorization, the answer-model selectors and the admin
forms all ask here, so the rule and its description cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

#: The agent name a request carries when it names none: the web pages, and API calls without one.
NO_AGENT = ""
YES = "✓"
NO = "✗"


def agent_may_use(*, agent_names: Any, browser_use: bool, agent_name: str) -> bool:
    """Whether a caller naming ``agent_name`` passes the agent rule.

    No agent names: any caller. Agent names: those agents, and callers naming no agent
    (the browser) only when ``browser_use`` is set. Malformed stored names let nobody in.
    """
    if not isinstance(agent_names, list):
        return False
    if not agent_names or agent_name in agent_names:
        return True
    return agent_name == NO_AGENT and bool(browser_use)


@dataclass(frozen=True)
class UserAccess:
    """One user's access: in the browser, and as which agents (``()``: any agent name)."""

    username: str
    browser: bool
    agents: tuple[str, ...]

    @property
    def text(self) -> str:
        browser = f"browser {YES}" if self.browser else f"browser {NO} (agent names are set)"
        if not self.agents:
            agents = f"any agent name {YES}"
        else:
            noun = "agent" if len(self.agents) == 1 else "agents"
            agents = f"{noun} {', '.join(self.agents)} {YES}"
        return f"{self.username}: {browser} · {agents}"


@dataclass(frozen=True)
class AccessSummary:
    """What the admin is told about who can use a binding or an answer model."""

    users: tuple[UserAccess, ...]
    #: Why nobody can use it at all (disabled, no users), each a sentence; empty when someone can.
    blockers: tuple[str, ...]
    #: Conditions that do not shut anyone out but an admin should know (e.g. a disabled scope).
    notes: tuple[str, ...] = ()

    @property
    def lines(self) -> list[str]:
        return [*self.blockers, *self.notes, *(user.text for user in self.users)]

    @property
    def serves_anyone(self) -> bool:
        return not self.blockers

    @property
    def browser_users(self) -> int:
        return sum(1 for user in self.users if user.browser) if self.serves_anyone else 0


def access_summary(
    *,
    usernames: Iterable[str],
    agent_names: Any,
    browser_use: bool,
    enabled: bool,
    what: str,
    notes: Sequence[str] = (),
) -> AccessSummary:
    """The summary for these users and agent names; ``what`` names the thing ("binding", "answer model")."""
    names = sorted(set(usernames), key=lambda name: (name.casefold(), name))
    agents: tuple[str, ...] = (
        tuple(agent_names)
        if isinstance(agent_names, list) and all(isinstance(n, str) for n in agent_names)
        else ()
    )
    browser = agent_may_use(agent_names=list(agents), browser_use=browser_use, agent_name=NO_AGENT)
    blockers: list[str] = []
    if not enabled:
        blockers.append(f"Disabled: nobody can use this {what} until it is enabled.")
    if not names:
        blockers.append(f"No users are chosen: nobody can use this {what}.")
    return AccessSummary(
        users=tuple(UserAccess(username=name, browser=browser, agents=agents) for name in names),
        blockers=tuple(blockers),
        notes=tuple(notes),
    )


def serves_column(*, user_count: int, agent_names: Any, browser_use: bool, enabled: bool) -> str:
    """The list pages' "Serves" cell: users, agents, browser, e.g. "2 users · agents lead_agent · browser ✗"."""
    if not enabled:
        return "nobody (disabled)"
    if user_count == 0:
        return "nobody (no users)"
    users = f"{user_count} user" + ("" if user_count == 1 else "s")
    agents = list(agent_names) if isinstance(agent_names, list) else []
    browser = agent_may_use(agent_names=agents, browser_use=browser_use, agent_name=NO_AGENT)
    agent_text = (
        "any agent" if not agents else ("agent " if len(agents) == 1 else "agents ") + ", ".join(agents)
    )
    return f"{users} · {agent_text} · browser {YES if browser else NO}"
