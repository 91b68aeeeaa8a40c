"""The HTML of a message's tool calls and non-text parts in the thread viewer.

Built beside the message body, not inside its cached fragment: which tool message
answers a call depends on messages written after the call. Every caller-written
value (tool names, arguments, ids, thinking text, media types, URLs) goes through
``format_html`` and is shown as escaped text; the only link is to another message
of the same thread, by its server-assigned id. Image and file placeholders are
never fetched or linked.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from knowledgeweb.threads.calls import describe_call, part_label, part_text
from knowledgeweb.threads.models import Message


def message_anchor(message: Message) -> str:
    """The id of a message's item in the thread page."""
    return f"message-{message.id}"


def render_calls_and_parts(message: Message, answers: Sequence[Message | None]) -> SafeString:
    """A message's tool calls (each linked to the tool message that answered it) and its
    parts, collapsed; empty for a message with neither."""
    if not message.tool_calls and not message.parts:
        return SafeString("")
    html = SafeString("")
    if message.tool_calls:
        items = format_html_join(
            "",
            "{}",
            (
                (_call(call, answers[i] if i < len(answers) else None),)
                for i, call in enumerate(message.tool_calls)
            ),
        )
        html += format_html('<ul class="tool-calls" data-tool-calls>{}</ul>', items)
    if message.parts:
        html += format_html_join("", "{}", ((_part(part),) for part in message.parts))
    return html


def _call(call: dict[str, object], answer: Message | None) -> SafeString:
    if answer is not None:
        result = format_html(
            '<a class="tool-call-answer" href="#{}" data-tool-call-answer="{}">see the result (message {})</a>',
            message_anchor(answer),
            answer.seq,
            answer.seq,
        )
    else:
        result = format_html('<span class="tool-call-unanswered">{}</span>', "no result in this thread")
    return format_html(
        '<li class="tool-call" data-tool-call="{}"><span class="tool-call-text">{}</span> · {}'
        '<details class="tool-call-args"><summary>Arguments</summary>'
        '<pre class="plain-text">{}</pre></details></li>',
        call["id"],
        describe_call(call),
        result,
        json.dumps(call["args"], ensure_ascii=False, indent=2, sort_keys=True),
    )


def _part(part: dict[str, str]) -> SafeString:
    return format_html(
        '<details class="message-part" data-part="{}"><summary>{}</summary>'
        '<div class="message-part-text plain-text">{}</div></details>',
        part["type"],
        part_label(part),
        part_text(part),
    )
