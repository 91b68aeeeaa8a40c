"""Read side of the threads app. Selectors only read: nothing here writes to the database.

Import selectors from here. ``threads`` finds threads and messages and says who may read
which; ``messages`` reads a thread's messages as a page does; ``renders`` serves each
message's render as stored (``thread_renders``): replacing a render is the renders service's
work (``threads.services.renders``), never a read's.
"""

from knowledgeweb.threads.selectors.messages import (
    renders_evidence,
    thread_answer_number,
    thread_citations,
    thread_messages,
    thread_outline,
    thread_questions,
    thread_source_numbers,
)
from knowledgeweb.threads.selectors.renders import (
    ComputedRenders,
    render_row,
    renders_compute,
    thread_renders,
)
from knowledgeweb.threads.selectors.threads import (
    CURSOR_PATTERN,
    MAX_SEARCH_CHARS,
    READ_ANY_THREAD,
    THREAD_ORDER,
    ThreadPage,
    message_get_for_owner,
    message_get_for_reader,
    reads_any_thread,
    thread_cursor,
    thread_get_for_owner,
    thread_get_for_reader,
    thread_list_for_owner,
    thread_page_for_owner,
    thread_texts_matching,
)

__all__ = [
    "CURSOR_PATTERN",
    "MAX_SEARCH_CHARS",
    "READ_ANY_THREAD",
    "THREAD_ORDER",
    "ComputedRenders",
    "ThreadPage",
    "message_get_for_owner",
    "message_get_for_reader",
    "reads_any_thread",
    "render_row",
    "renders_compute",
    "renders_evidence",
    "thread_answer_number",
    "thread_citations",
    "thread_cursor",
    "thread_get_for_owner",
    "thread_get_for_reader",
    "thread_list_for_owner",
    "thread_messages",
    "thread_outline",
    "thread_page_for_owner",
    "thread_questions",
    "thread_renders",
    "thread_source_numbers",
    "thread_texts_matching",
]
