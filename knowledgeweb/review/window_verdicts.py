"""The verdicts a thread page's window lays over itself as chips: one fixed SQL statement.

Every view of a thread page asks this, judged or not; compiling the equivalent ORM query (a
join to the messages for the window's seq range and to the reviewers' names) cost more than
running it (bench/render.py, bench/verdicts.py). The statement is built once from the models'
tables and columns, and every value is a parameter.
"""

from __future__ import annotations

from functools import cache
from typing import cast

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Field

from knowledgeweb.review.models import Verdict
from knowledgeweb.review.selectors import VerdictView
from knowledgeweb.threads.models import Message, Thread


def window_verdicts(*, thread: Thread, seqs: tuple[int, int]) -> list[VerdictView]:
    """Every verdict on ``thread``'s messages from seq ``seqs[0]`` to ``seqs[1]`` (a page
    window's: a range, never a list of its hundred message ids), oldest first, with its
    reviewer's name and without its time (a chip never shows when; ``created_at`` is None)."""
    message_id = Message._meta.pk
    thread_key = Thread._meta.pk.get_db_prep_value(thread.pk, connection)
    with connection.cursor() as cursor:
        cursor.execute(_statement(), [thread_key, seqs[0], seqs[1]])
        rows = cursor.fetchall()
    return [
        VerdictView(
            pk, message_id.to_python(message), kind, position, href, label, value, note, reviewer, name, None
        )
        for pk, message, kind, position, href, label, value, note, reviewer, name in rows
    ]


@cache
def _statement() -> str:
    qn = connection.ops.quote_name
    user = get_user_model()
    verdicts, messages, users = (qn(m._meta.db_table) for m in (Verdict, Message, user))
    column = {f.name: qn(f.column) for f in Verdict._meta.concrete_fields}
    username = qn(cast(Field, user._meta.get_field(user.USERNAME_FIELD)).column)
    fields = ", ".join(
        f"v.{column[name]}"
        for name in ("id", "message", "kind", "position", "href", "label", "value", "note", "reviewer")
    )
    # Table and column names from the models, quoted; every value is a parameter.
    return (
        f"SELECT {fields}, u.{username} FROM {verdicts} v "  # noqa: S608
        f"JOIN {messages} m ON m.{qn('id')} = v.{column['message']} "
        f"JOIN {users} u ON u.{qn('id')} = v.{column['reviewer']} "
        f"WHERE v.{column['thread']} = %s AND m.{qn('seq')} >= %s AND m.{qn('seq')} <= %s "
        f"ORDER BY v.{column['created_at']}, v.{column['id']}"
    )
