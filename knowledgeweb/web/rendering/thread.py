"""A whole thread page, assembled from the renders stored at write (docs/architecture.md#pages-and-dom-hooks, §10).

Each message's HTML, citation verdicts and (for tool messages) panel entries
were computed when it was written (``threads.services.renders``). A page only
reads them in one query and joins them; a render from another renderer is
brought up to date first, in ``seq`` order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from uuid import UUID

from django.utils.safestring import SafeString

from knowledgeweb.knowledge import Evidence
from knowledgeweb.threads.calls import call_answers
from knowledgeweb.threads.models import Message, MessageRender, MessageStatus, MessageType, Thread
from knowledgeweb.threads.rendering.sources import source_entry
from knowledgeweb.threads.selectors import renders_evidence, thread_renders
from knowledgeweb.web.calls import message_anchor, render_calls_and_parts

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
    """A source in the panel (its handle), how often the thread's answers cite it, and its entry's HTML."""

    handle: str
    citations: int
    html: SafeString
    #: The validated source itself, for cited entries (per-answer source lists name it).
    evidence: Evidence | None = None


@dataclass(frozen=True, slots=True)
class ThreadView:
    messages: tuple[MessageView, ...]
    cited: tuple[SourceEntry, ...]
    uncited: tuple[SourceEntry, ...]

    @property
    def citation_total(self) -> int:
        return sum(view.resolved + view.unresolved + view.malformed for view in self.messages)

    @property
    def messages_html(self) -> SafeString:
        # Joined here rather than looped in the template, for the same reason as the entries.
        return SafeString("".join(view.item for view in self.messages))

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


#: What a page reads of each stored render: not the evidence records nor the export text.
PAGE_FIELDS = ("message_id", "fingerprint", "html", "citations", "entries")


def render_thread(thread: Thread, messages: Sequence[Message]) -> ThreadView:
    """The page of ``thread``: ``messages`` are all its messages in order (``thread_outline``)."""
    renders = thread_renders(thread=thread, messages=messages, fields=PAGE_FIELDS)
    views: list[MessageView] = []
    counts: dict[str, int] = {}
    retrieved: dict[str, list[str]] = {}
    holder: dict[str, UUID] = {}  # the tool message whose evidence first carried each handle
    for message in messages:
        render: MessageRender = renders[message.id]
        resolved = unresolved = malformed = 0
        for citation in render.citations:
            state = citation["state"]
            if state == "resolved":
                resolved += 1
                counts[citation["handle"]] = counts.get(citation["handle"], 0) + 1
            elif state == "unresolved":
                unresolved += 1
            else:
                malformed += 1
        for handle, parts in render.entries.items():
            if handle not in retrieved:
                retrieved[handle] = parts
                holder[handle] = message.id
        # html was built by our sanitizer and templates at write.
        views.append(MessageView(message, SafeString(render.html), resolved, unresolved, malformed))
    evidence = renders_evidence(message_ids={holder[h] for h in counts if h in holder})
    cited = tuple(
        SourceEntry(h, n, source_entry(retrieved[h], n), evidence.get(h))
        for h, n in counts.items()
        if h in retrieved
    )
    uncited = tuple(
        SourceEntry(h, 0, source_entry(parts, 0)) for h, parts in retrieved.items() if h not in counts
    )
    views = _with_calls_and_parts(views, messages)
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
