"""A thread page's turns: each question as a heading, an outline to jump by, and per-answer sources.

Built from the rendered ``ThreadView`` without touching the render pipeline:
questions are plain text (escaped here), answers are the pipeline's sanitized
fragments, and an answer's references are the found sources of the sources
panel that its resolved citations name (from the stored verdicts, with the
thread's numbers, listed by number). Nothing here can make a citation's source
found: a handle counts only if the panel holds it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from html import escape
from uuid import UUID

from django.utils.html import format_html
from django.utils.safestring import SafeString

from knowledgeweb.threads.models import MessageType
from knowledgeweb.web.rendering.views import MessageView, SourceEntry, ThreadView

#: A question longer than this (or holding a blank line) is headed by its opening words;
#: the whole text follows the heading.
HEADING_CHARS = 160
#: The outline lists a thread's questions once it has at least this many.
OUTLINE_MIN_TURNS = 2

# Answer headings sit below the question's h2: h1 -> h3 ... h4+ -> h6.
_ANSWER_HEADING = re.compile(r"<(/?)h([1-6])\b")


@dataclass(frozen=True, slots=True)
class Turn:
    number: int
    anchor: str
    heading: str


@dataclass(frozen=True, slots=True)
class ThreadOutline:
    items: SafeString
    turns: tuple[Turn, ...]
    #: Each message's item in ``items``: (message id hex, start, end), in page order (what a
    #: reader's overlays find their message by, without parsing the page).
    places: tuple[tuple[str, int, int], ...] = ()

    @property
    def shown(self) -> bool:
        return len(self.turns) >= OUTLINE_MIN_TURNS


def turn_outline(
    view: ThreadView, questions: Mapping[UUID, str], *, turns_before: int = 0, answers_before: int = 0
) -> ThreadOutline:
    """The thread's ``<li>`` items (questions as headings, answers with their sources) and turns.

    ``questions`` holds the text of the human messages by id (``thread_questions``): the page
    otherwise loads no message content. A window of a longer thread goes on numbering after
    the questions and answers before it (``turns_before``, ``answers_before``).
    """
    cited = {entry.handle: entry for entry in view.cited if entry.evidence is not None}
    parts: list[str] = []
    turns: list[Turn] = []
    places: list[tuple[str, int, int]] = []
    length = 0
    answers = answers_before
    for message_view in view.messages:
        message = message_view.message
        if message.type == MessageType.HUMAN:
            content = questions.get(message.id, "")
            number = turns_before + len(turns) + 1
            turn = Turn(number, f"turn-{number}", _heading_text(content))
            turns.append(turn)
            part = _question_item(message_view, turn, content)
        elif message.type == MessageType.AI:
            answers += 1
            # Listed by number, so an answer's list reads [1] [2] [4], never [4] [1] [2].
            listed = sorted((cited[h] for h in message_view.cites if h in cited), key=lambda e: e.number)
            part = _answer_item(message_view, answers, listed)
        else:
            part = message_view.item
        parts.append(part)
        places.append((message.id.hex, length, length + len(part)))
        length += len(part)
    return ThreadOutline(items=SafeString("".join(parts)), turns=tuple(turns), places=tuple(places))


def _heading_text(content: str) -> str:
    text = " ".join(content.split())
    if len(text) <= HEADING_CHARS:
        return text or "(an empty question)"
    return text[: HEADING_CHARS - 1].rsplit(" ", 1)[0] + "…"


def _question_item(message_view: MessageView, turn: Turn, content: str) -> str:
    message = message_view.message
    whole = " ".join(content.split())
    # The full text follows the heading only when the heading had to shorten or reflow it.
    body = (
        ""
        if turn.heading == whole and "\n\n" not in content.strip()
        else format_html('<div class="message-body plain-text">{}</div>', content)
    )
    return format_html(
        '<li class="message message-human" data-message-type="human" data-seq="{}" id="{}">'
        '<h2 class="message-question"><span class="turn-label">Question {}</span> '
        '<span class="question-text">{}</span></h2>{}{}</li>',
        message.seq,
        turn.anchor,
        turn.number,
        turn.heading,
        body,
        message_view.extras,  # the question's own parts (images, thinking), built escaped
    )


def _answer_item(message_view: MessageView, number: int, sources: list[SourceEntry]) -> str:
    item = _ANSWER_HEADING.sub(_demote, message_view.item)
    if not sources or not item.endswith("</li>"):
        return item
    anchor = f"answer-{number}-sources"
    links = "".join(_reference(entry) for entry in sources)
    block = (
        f'<section class="answer-sources" data-answer-sources id="{anchor}" aria-labelledby="{anchor}-heading">'
        f'<p class="answer-sources-heading" id="{anchor}-heading">Sources of answer {number}</p>'
        f'<ol class="answer-source-list">{links}</ol></section>'
    )
    return item[: -len("</li>")] + block + "</li>"


def _reference(entry: SourceEntry) -> str:
    """One line of an answer's references: number, title, provider, dataset and page."""
    source = entry.evidence
    if source is None:  # only cited entries with their evidence are listed
        return ""
    meta = [source.provider]
    if source.dataset_name:
        meta.append(source.dataset_name)
    if source.pages:
        meta.append(("page " if len(source.pages) == 1 else "pages ") + ", ".join(map(str, source.pages)))
    note = escape(f" ({entry.note})") if entry.note else ""
    # html.escape, not format_html: a long thread lists thousands of these, and every field
    # is a plain string (handles and ids are validated hex; titles and names are escaped).
    return (
        f'<li><a href="#{escape(source.handle)}" data-answer-source="{escape(source.id)}">'
        f'<span class="citation-number">[{entry.number}]</span> {escape(source.title)}'
        f"{note}</a> "
        f'<span class="answer-source-meta">{escape(" · ".join(meta))}</span></li>'
    )


def _demote(match: re.Match[str]) -> str:
    return f"<{match.group(1)}h{min(6, int(match.group(2)) + 2)}"
