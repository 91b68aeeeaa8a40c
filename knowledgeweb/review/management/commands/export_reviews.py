"""``manage.py export_reviews QUEUE [--format jsonl|csv] [--output FILE]``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledgeweb.review.dataset import FORMATS, export_lines
from knowledgeweb.review.models import ReviewQueue


class Command(BaseCommand):
    help = "Write a review queue's dataset: one row per judged citation and answer (JSONL or CSV)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("queue", help="The queue's id or exact name.")
        parser.add_argument("--format", choices=FORMATS, default="jsonl")
        parser.add_argument("--output", help="A file to write (default: standard output).")

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["queue"]
        # An admin command: any queue, found by id or by its exact (unique) name.
        queue = ReviewQueue.objects.filter(name=name).first()
        if queue is None and name.isdigit():
            queue = ReviewQueue.objects.filter(pk=int(name)).first()
        if queue is None:
            raise CommandError(f"No review queue {name!r} (give its id or exact name).")
        lines = export_lines(queue, options["format"])
        if options["output"]:
            # newline="": the CSV writer ends its own lines (RFC 4180's CRLF).
            with Path(options["output"]).open("w", encoding="utf-8", newline="") as out:
                rows = sum(1 for line in lines if out.write(line) is not None) - (options["format"] == "csv")
            self.stderr.write(f"Wrote {rows} rows to {options['output']}.")
            return
        for line in lines:
            self.stdout.write(line, ending="")
