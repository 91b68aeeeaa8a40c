"""``manage.py export_thread ID --format json|markdown``."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledgeweb.threads.interchange.export import EXPORT_FORMATS, thread_export
from knowledgeweb.threads.models import Thread


class Command(BaseCommand):
    help = "Print a thread as JSON (messages as stored) or Markdown (citations as numbered references)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("thread_id", help="The thread's UUID.")
        parser.add_argument("--format", choices=EXPORT_FORMATS, default="json")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            thread_id = UUID(options["thread_id"])
        except ValueError as exc:
            raise CommandError(f"{options['thread_id']!r} is not a thread id (a UUID).") from exc
        # An admin command: it may export any user's thread.
        thread = Thread.objects.filter(pk=thread_id).first()
        if thread is None:
            raise CommandError(f"No thread {thread_id}.")
        self.stdout.write(thread_export(thread=thread, format=options["format"]).content, ending="")
