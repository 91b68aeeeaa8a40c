"""A thread of 300 tool messages of 1.95 MB each: the page stays small and the worker light.

Writes the thread through the real append path, then measures one
GET /threads/<id>/: the response size (target under 5 MB: each tool message
shows a bounded preview and links to its full output) and the memory the
request allocates (tracemalloc peak, target under 200 MB), plus the process's
resident memory before and after. Tool output is shown from the stored render;
the page never loads message contents.
"""

from __future__ import annotations

import os
import resource
import shutil
import sys
import time
import tracemalloc
from pathlib import Path

if __package__ in {None, ""}:
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))

from bench.harness import finish, setup_django, show_time, verdict

MESSAGES = 300
MESSAGE_BYTES = 1_950_000


def main() -> int:
    # The thread is larger than the default quotas allow (585 MB): this measures the page,
    # not the quota, so the bench raises them for its own process.
    for name in ("KNOWLEDGEWEB_QUOTA_THREAD_BYTES", "KNOWLEDGEWEB_QUOTA_USER_BYTES"):
        os.environ.setdefault(name, str(2 * MESSAGES * MESSAGE_BYTES))
    setup_django()
    from django.contrib.auth import get_user_model
    from django.test import Client

    from knowledgeweb.threads.services import message_append, thread_create

    user = get_user_model().objects.create_user("bench", password="bench-password-1")
    thread = thread_create(owner=user, title="Huge")
    line = "tool output line with <angle brackets> & ampersands 0123456789\n"
    content = (line * (MESSAGE_BYTES // len(line) + 1))[:MESSAGE_BYTES]
    started = time.perf_counter()
    for n in range(MESSAGES):
        message_append(thread=thread, type="tool", name="shell", content=f"{n}\n{content}"[:MESSAGE_BYTES])
    print(
        f"Huge thread: {MESSAGES} tool messages of {MESSAGE_BYTES:,} bytes ({MESSAGES * MESSAGE_BYTES / 2**20:,.0f} MiB)"
    )
    show_time(
        "writing them through message_append (each)", (time.perf_counter() - started) / MESSAGES, repeat=1
    )

    client = Client()
    client.force_login(user)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    tracemalloc.start()
    started = time.perf_counter()
    response = client.get(f"/threads/{thread.id}/")
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if response.status_code != 200:
        print(f"the page answered {response.status_code}")
        return 1
    show_time("GET /threads/<id>/ (under tracemalloc)", elapsed, repeat=1)
    verdict("huge thread: page size", len(response.content) / 1e6, 5.0, unit=" MB", digits=2)
    verdict(
        "huge thread: memory the request allocates (tracemalloc peak)",
        peak / 1e6,
        200.0,
        unit=" MB",
        digits=1,
    )
    print(
        f"  {'peak resident memory of the process before / after, MB':<58} {rss_before:10.0f} / {rss_after:.0f}"
    )
    # The database holds over half a gigabyte: do not leave it behind.
    database = Path(os.environ["DATABASE_URL"].removeprefix("sqlite:///"))
    shutil.rmtree(database.parent, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
