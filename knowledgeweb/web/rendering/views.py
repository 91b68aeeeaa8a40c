"""What a thread page shows, whole or one window: its messages, its sources panel and the walk's
stops, each built once by ``web.rendering.thread`` or ``web.rendering.window``."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.utils.safestring import SafeString

from knowledgeweb.knowledge import Evidence
from knowledgeweb.threads.models import Message, MessageStatus, MessageType
from knowledgeweb.web.calls import message_anchor

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
    #: The handles this answer's resolved citations name, in order of first citation.
    cites: tuple[str, ...] = ()
    #: The answer's number among the thread's answers (0 for other messages).
    answer: int = 0
    #: An answer with text that cites nothing: it carries the "no citations" badge.
    uncited: bool = False

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
            plural, verb = ("", "has") if inert == 1 else ("s", "have")
            note = (
                f'<p class="message-note">{inert} citation{plural} in this answer {verb} no source in '
                f"this thread's evidence and {'is' if inert == 1 else 'are'} not linked; select one to see why.</p>"
            )
        badge = ""
        if self.uncited:
            badge = (
                f'<p class="answer-badge" id="{uncited_anchor(message)}" data-issue="uncited" tabindex="-1">'
                '<span class="badge badge-warning">no citations</span> '
                "This answer cites no source: nothing in it can be checked against the evidence.</p>"
            )
        # type, status and seq are model choices and an integer: nothing here needs escaping.
        return SafeString(  # html is sanitized or escaped where it is built
            f'<li class="{classes}" id="{message_anchor(message)}" data-message-type="{message.type}" '
            f'data-seq="{message.seq}"><p class="message-role">{_ROLES.get(message.type, "System")}</p>'
            f'{badge}<div class="message-body">{self.html}</div>{self.extras}{note}</li>'
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
    #: The source's number in the thread (cited entries), in order of first citation.
    number: int = 0
    #: What tells this source apart from another of the same title ("page 4", "passage 2 of 3").
    note: str = ""


#: The kinds of problem the walk visits, and how each is named in the tally.
ISSUE_KINDS = ("unresolved", "malformed", "label-mismatch", "uncited")


@dataclass(frozen=True, slots=True)
class Issue:
    """One stop of the page's walk: the anchor of what it marks and its kind (``ISSUE_KINDS``)."""

    anchor: str
    kind: str


@dataclass(frozen=True, slots=True)
class ThreadView:
    messages: tuple[MessageView, ...]
    cited: tuple[SourceEntry, ...]
    uncited: tuple[SourceEntry, ...]
    #: Every problem of the page in page order: citations with no source or malformed, labels
    #: naming another source, answers that cite nothing (the walk's stops).
    issues: tuple[Issue, ...] = field(default=())

    @property
    def resolved_total(self) -> int:
        return sum(view.resolved for view in self.messages)

    @property
    def unresolved_total(self) -> int:
        return sum(view.unresolved for view in self.messages)

    @property
    def malformed_total(self) -> int:
        return sum(view.malformed for view in self.messages)

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


def uncited_anchor(message: Message) -> str:
    """The id of an answer's "no citations" badge (a stop of the walk)."""
    return f"uncited-{message.id.hex}"
