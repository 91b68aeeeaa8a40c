"""``manage.py rerender``: replace every stored render the running renderer did not make.

The one bulk path that re-renders (reads never do): the deploy runs it after the
server has started (``make serve``, via gunicorn's ``when_ready`` hook), so the
server answers at once with the renders as stored. Safe to run at any time: it
only replaces renders of another renderer version (``--force`` replaces all), one
thread per transaction, and can run again or be interrupted at any point.
Progress goes to stderr: a bar on a terminal, a line per thread otherwise (a log).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from knowledgeweb.library.progress import ProgressBar
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.rendering import version
from knowledgeweb.threads.services.renders import thread_rerender


class Command(BaseCommand):
    help = "Re-render every thread's messages whose stored render came from another renderer version."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--force", action="store_true", help="re-render every message, stale or not")

    def handle(self, *args: Any, **options: Any) -> None:
        ids = list(Thread.objects.order_by("created_at").values_list("pk", flat=True))
        interactive = self.stderr.isatty()
        bar = ProgressBar(self.stderr, interactive=interactive)
        rendered = 0
        for done, pk in enumerate(ids, start=1):
            thread = Thread.objects.filter(pk=pk).first()
            if thread is not None:  # deleted since the list was read
                rendered += thread_rerender(thread=thread, force=options["force"])
            bar.update(done, len(ids), str(pk))
        bar.finish()
        self.stdout.write(
            f"Renderer version {version.RENDERER_VERSION}: {rendered} message(s) rendered in {len(ids)} thread(s)."
        )
