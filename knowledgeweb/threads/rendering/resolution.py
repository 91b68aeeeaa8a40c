"""Citation resolution: the markup of each citation's hook (docs/contract.md#reading-evidence).

Which link is a citation, and its verdict, come from the link grammar's parse of
the message; the markdown stage's citation rule (``markdown``) puts each
citation's hook where its link stood, in place of the link and its label, after
the sanitizer's allowlist has read the message's own markup (``pipeline``). The
hooks are the page's markup, never the message's, so they are built here from
the verdict alone, every value escaped, and are one of the stable hooks
(docs/architecture.md#pages-and-dom-hooks):

- resolved: ``<a class="citation" data-citation="resolved" data-source-id="ID"
  href="#knowledge-source-ID" id="cite-…">`` holding the source's number (filled
  in when the page is assembled: numbers are the thread's) and, for screen
  readers, the source's own title. The answer's label is never its text: a
  label that names another source is kept only as ``data-label`` for the dialog
  ("The answer labelled this citation …").
- unresolved / malformed: a ``<button type="button" class="citation">`` with
  the label (its ``citation:`` prefix removed) that toggles a native popover
  holding the reason, which is also its accessible description. Nothing to
  follow.

The verdict itself comes from ``knowledgeweb.threads.evidence.resolve_citation``,
the one validator; this module only decides markup.
"""

from __future__ import annotations

from dataclasses import dataclass

from knowledgeweb.knowledge.citations import classify_href
from knowledgeweb.knowledge.passages import display_label
from knowledgeweb.threads.evidence import ResolvedCitation

#: The empty element the page fills with a resolved citation's number (``web.rendering.page``).
#: Only the hooks write tags with a class, so text written in a message can never pose as one.
NUMBER_SLOT = '<span class="citation-number"></span>'

#: What an unverified citation shows in place of the answer's label (never its number), and
#: the heading of its reason (docs/decisions/0036-the-reader-honest-words-one-numbering.md).
STATE_WORDS = {"unresolved": "no source", "malformed": "malformed"}
STATE_NAMES = {"unresolved": "No source", "malformed": "Malformed citation"}
#: The words a label mismatch adds to its citation's accessible name and preview.
MISMATCH_WORDS = "label names another source"


@dataclass(frozen=True, slots=True)
class CitationHook:
    """A citation's verdict and what its hook shows: its anchor, the closest passage of
    its source (sentence numbers of the excerpt) and whether its label names another source."""

    verdict: ResolvedCitation
    anchor: str
    passage: tuple[int, ...] = ()
    label_mismatch: bool = False


def _text(text: str) -> str:
    """Text content, escaped as the sanitizer writes the message's own text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _attribute(name: str, value: str) -> str:
    """`` name="value"``, quoted as the sanitizer quotes the message's own attributes: in
    double quotes unless the value holds ``"`` and no ``'``."""
    value = value.replace("&", "&amp;").replace("<", "&lt;")
    if '"' in value and "'" not in value:
        return f" {name}='{value}'"
    return f' {name}="{value.replace(chr(34), "&quot;")}"'


def _tag(name: str, *attributes: tuple[str, str]) -> str:
    return f"<{name}{''.join(_attribute(key, value) for key, value in attributes)}>"


def citation_html(hook: CitationHook) -> str:
    """The markup of one citation's hook."""
    verdict = hook.verdict
    if verdict.state == "resolved" and verdict.source is not None:
        source = verdict.source
        attrs = [
            ("class", "citation"),
            ("data-citation", "resolved"),
            ("data-source-id", source.id),
            ("href", "#" + source.handle),
            ("id", hook.anchor),
        ]
        if hook.passage:
            attrs.append(("data-passage", " ".join(str(i) for i in hook.passage)))
        flag = ""
        if hook.label_mismatch:
            attrs += [("data-label", display_label(verdict.label)), ("data-issue", "label-mismatch")]
            flag = (
                f'<span class="citation-flag" aria-hidden="true">≠</span>'
                f'<span class="visually-hidden"> ({MISMATCH_WORDS})</span>'
            )
        return (
            f"{_tag('a', *attrs)}{NUMBER_SLOT}"
            f'<span class="visually-hidden">{_text(" " + source.title)}</span>{flag}</a>'
        )
    reason_id = f"{hook.anchor}-reason"
    button = _tag(
        "button",
        ("type", "button"),
        ("class", "citation"),
        ("data-citation", verdict.state),
        ("id", hook.anchor),
        ("popovertarget", reason_id),
        ("aria-describedby", reason_id),
        ("data-issue", verdict.state),
    )
    reason = _tag(
        "span",
        ("class", "citation-reason"),
        ("id", reason_id),
        ("popover", "auto"),
        ("data-citation-reason", verdict.state),
    )
    # The reason's own text: the page puts a truer one in its place when the cited source was
    # retrieved only later or failed validation (``web.rendering.page``), found by the handle.
    _, handle = classify_href(verdict.href)
    because = [("class", "reason-text")]
    if verdict.state == "unresolved" and handle is not None:
        because.append(("data-reason-handle", handle))
    label = display_label(verdict.label)
    labelled = " The answer labelled it “" + label + "”; its link is " if label else " Its link is "
    return (
        f"{button}{_text(STATE_WORDS.get(verdict.state, 'citation'))}</button>"
        f"{reason}<strong>{_text(STATE_NAMES.get(verdict.state, 'Citation') + ': ')}</strong>"
        f"{_tag('span', *because)}{_text(verdict.reason)}</span>{_text(labelled)}"
        f'<code class="reason-href">{_text(verdict.href)}</code>.</span>'
    )
