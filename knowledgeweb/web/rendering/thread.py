"""A whole thread page: one evidence walk, cached message fragments, the sources panel (SPEC §8, §10).

Each message's HTML is computed once and kept in Django's cache under
(message id, message digest, digest of the evidence handles available before
it, ``RENDERER_VERSION``). Messages never change and neither does what precedes
them, so a warm render fetches every fragment in one ``get_many`` and only
assembles them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import islice
from typing import Any, TypeGuard
from uuid import UUID

from django.template.loader import render_to_string
from django.utils.html import format_html
from django.utils.safestring import SafeString

from knowledgeweb.counters import Counter
from knowledgeweb.knowledge import Evidence
from knowledgeweb.memo import memo_get_many, memo_set_many
from knowledgeweb.threads.calls import call_answers
from knowledgeweb.threads.evidence import evidence_before, messages_sources
from knowledgeweb.threads.models import Message, MessageStatus, MessageType
from knowledgeweb.web.calls import message_anchor, render_calls_and_parts
from knowledgeweb.web.rendering.pipeline import render_assistant_content
from knowledgeweb.web.rendering.sources import source_entry, source_entry_body
from knowledgeweb.web.rendering.tools import read_tool_content

# Bump whenever the HTML a message renders to changes, so stale fragments are never served.
RENDERER_VERSION = 5

_NO_EVIDENCE = "-"

#: Message fragments actually built (cache misses: answers and tool messages); tests read it.
fragment_counter = Counter()


_NO_EXTRAS = SafeString("")


@dataclass(frozen=True, slots=True)
class MessageView:
    """A message with its rendered body (safe HTML) and its citation tallies."""

    message: Message
    html: SafeString
    resolved: int = 0
    unresolved: int = 0
    malformed: int = 0
    # Tool calls and parts (knowledgeweb.web.calls): built per page, not cached with the body.
    extras: SafeString = _NO_EXTRAS

    @property
    def item(self) -> SafeString:
        """The message's ``<li>`` in the thread, built without the template engine: a long
        thread's warm render is otherwise dominated by the template loop."""
        message = self.message
        classes = f"message message-{message.type}"
        if message.status == MessageStatus.ERROR:
            classes += " message-error"
        inert = self.unresolved + self.malformed
        note = ""
        if inert:
            plural, verb = ("", "is") if inert == 1 else ("s", "are")
            note = (
                f'<p class="message-note">{inert} citation{plural} in this answer could not be '
                f"verified and {verb} shown as plain text.</p>"
            )
        # type, status and seq are model choices and an integer: nothing here needs escaping.
        return SafeString(  # html is sanitized or escaped where it is built
            f'<li class="{classes}" id="{message_anchor(message)}" data-message-type="{message.type}" '
            f'data-seq="{message.seq}"><p class="message-role">{_ROLES.get(message.type, "System")}</p>'
            f'<div class="message-body">{self.html}</div>{self.extras}{note}</li>'
        )


_ROLES: dict[str, str] = {MessageType.AI: "Assistant", MessageType.HUMAN: "You", MessageType.TOOL: "Tool"}


@dataclass(frozen=True, slots=True)
class SourceEntry:
    """A source in the panel, how often the thread's answers cite it, and its entry's HTML."""

    evidence: Evidence
    citations: int
    html: SafeString


@dataclass(frozen=True, slots=True)
class ThreadView:
    messages: tuple[MessageView, ...]
    cited: tuple[SourceEntry, ...]
    uncited: tuple[SourceEntry, ...]

    @property
    def citation_total(self) -> int:
        return sum(view.resolved + view.unresolved + view.malformed for view in self.messages)

    @property
    def cited_html(self) -> SafeString:
        # Joined here rather than looped in the template: thousands of entries make the
        # template loop the largest cost of a warm render.
        return SafeString("".join(entry.html for entry in self.cited))

    @property
    def uncited_html(self) -> SafeString:
        return SafeString("".join(entry.html for entry in self.uncited))

    @property
    def retrieved_total(self) -> int:
        return len(self.cited) + len(self.uncited)

    @property
    def inert_total(self) -> int:
        return sum(view.unresolved + view.malformed for view in self.messages)


class _HandleDigest:
    """A running digest of the handles available so far.

    ``evidence_before`` only ever adds handles, in order, so the new ones are
    the keys past the count already hashed.
    """

    def __init__(self) -> None:
        self._hash = hashlib.sha256(b"knowledgeweb.handles.v1")
        self._count = 0
        self._hex = self._hash.hexdigest()[:32]

    def of(self, available: Mapping[str, Evidence]) -> str:
        if len(available) != self._count:
            for handle in islice(available, self._count, None):
                self._hash.update(handle.encode() + b"\n")
            self._count = len(available)
            self._hex = self._hash.copy().hexdigest()[:32]
        return self._hex


def _own_digest(own: Mapping[str, Evidence]) -> str:
    if not own:
        return _NO_EVIDENCE
    return hashlib.sha256("\n".join(["knowledgeweb.own.v1", *own]).encode()).hexdigest()[:32]


def fragment_cache_key(message: Message, handles_digest: str) -> str:
    return f"knowledgeweb:fragment:v{RENDERER_VERSION}:{message.id}:{message.digest}:{handles_digest}"


Walked = list[tuple[Message, Mapping[str, Evidence], str | None]]
Sources = Mapping[UUID, dict[str, Evidence]]


def render_thread(messages: Sequence[Message]) -> ThreadView:
    """Render every message of a thread, walking its evidence once."""
    sources = messages_sources(messages)
    walked = _walk(messages, sources)
    views, counts, bodies = _assemble(walked, sources)
    views = _with_calls_and_parts(views, messages)
    retrieved: dict[str, Evidence] = {}
    for message in messages:
        for handle, source in sources.get(message.id, {}).items():
            retrieved.setdefault(handle, source)
    cited = tuple(
        SourceEntry(retrieved[h], n, source_entry(retrieved[h], bodies[h], n))
        for h, n in counts.items()
        if h in retrieved
    )
    uncited = tuple(
        SourceEntry(source, 0, source_entry(source, bodies[h], 0))
        for h, source in retrieved.items()
        if h not in counts
    )
    return ThreadView(messages=tuple(views), cited=cited, uncited=uncited)


def _with_calls_and_parts(views: list[MessageView], messages: Sequence[Message]) -> list[MessageView]:
    if not any(m.tool_calls or m.parts for m in messages):
        return views
    answers = call_answers(messages)
    return [
        replace(view, extras=render_calls_and_parts(view.message, answers.get(view.message.id, [])))
        if view.message.tool_calls or view.message.parts
        else view
        for view in views
    ]


def _walk(messages: Sequence[Message], sources: Sources) -> Walked:
    """Each message with the evidence before it and its fragment key (None: no fragment needed)."""
    digest = _HandleDigest()
    walked: Walked = []
    for message, available in evidence_before(messages, sources=sources):
        if message.type == MessageType.AI:
            key: str | None = fragment_cache_key(message, digest.of(available))
        elif message.type == MessageType.TOOL:
            # A tool message shows only its own evidence, whatever came before it. Its key
            # still names that evidence: a reader whose rules change (a new evidence cache
            # version) may accept different sources from the same message, and the fragment
            # carries the panel entry of each one.
            key = fragment_cache_key(message, _own_digest(sources.get(message.id, {})))
        else:
            key = None
        walked.append((message, available, key))
    return walked


def _assemble(walked: Walked, sources: Sources) -> tuple[list[MessageView], dict[str, int], dict[str, str]]:
    """Fetch every fragment in one call, render only the misses, tally citations per handle,
    and collect each source's panel-entry body from the first tool message that carries it."""
    keys = [key for _, _, key in walked if key is not None]
    cached: dict[str, Any] = memo_get_many(keys)
    fresh: dict[str, dict[str, Any]] = {}
    views: list[MessageView] = []
    counts: dict[str, int] = {}
    bodies: dict[str, str] = {}
    for message, before, key in walked:
        if key is None:
            plain = format_html('<div class="plain-text">{}</div>', message.content)
            views.append(MessageView(message, plain))
            continue
        hit = cached.get(key)
        fragment = hit if _is_fragment(hit) else None
        if fragment is None:
            fragment = _render_fragment(message, before, sources.get(message.id, {}))
            fresh[key] = fragment
        for handle in fragment["cited"]:
            counts[handle] = counts.get(handle, 0) + 1
        for handle, body in fragment["entries"].items():
            bodies.setdefault(handle, body)
        views.append(
            MessageView(
                message,
                SafeString(fragment["html"]),  # built by our sanitizer and templates
                resolved=len(fragment["cited"]),
                unresolved=fragment["unresolved"],
                malformed=fragment["malformed"],
            )
        )
    memo_set_many(fresh)
    return views, counts, bodies


def _is_fragment(value: object) -> TypeGuard[dict[str, Any]]:
    return isinstance(value, dict) and {"html", "cited", "unresolved", "malformed", "entries"} <= value.keys()


def _render_fragment(
    message: Message, available: Mapping[str, Evidence], own: dict[str, Evidence]
) -> dict[str, Any]:
    fragment_counter.increment()
    if message.type == MessageType.AI:
        rendered = render_assistant_content(message.content, available)
        states = [verdict.state for verdict in rendered.verdicts]
        return {
            "html": rendered.html,
            "cited": [v.source.handle for v in rendered.verdicts if v.source is not None],
            "unresolved": states.count("unresolved"),
            "malformed": states.count("malformed"),
            "entries": {},
        }
    html = render_to_string(
        "web/fragments/tool_message.html",
        {
            "message": message,
            "failed": message.status == MessageStatus.ERROR,
            "tool": None
            if message.status == MessageStatus.ERROR
            else read_tool_content(message.content, own),
        },
    )
    entries = {handle: source_entry_body(source) for handle, source in own.items()}
    return {"html": html, "cited": [], "unresolved": 0, "malformed": 0, "entries": entries}
