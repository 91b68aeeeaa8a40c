"""``manage.py ingest PATH... --collection NAME``: index files into the local library."""

from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from knowledgeweb.library.progress import ProgressBar
from knowledgeweb.library.services import paths_ingest


class Command(BaseCommand):
    help = (
        "Index Markdown, text, HTML and PDF files (directories are walked) into a local collection. "
        "Re-ingesting a file updates it; unusable files are reported and skipped."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH", help="files or directories to index")
        parser.add_argument("--collection", required=True, help="the collection to index into")

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["collection"].strip()
        if not name:
            raise CommandError("--collection must name a collection.")
        bar = ProgressBar(self.stderr, interactive=self.stderr.isatty())

        def on_file(index: int, total: int, path: Path) -> None:
            bar.update(index, total, path.name)

        try:
            report = paths_ingest(
                collection_name=name,
                paths=[Path(p) for p in options["paths"]],
                key_root=Path.cwd(),
                on_file=on_file,
            )
        except ValidationError as exc:
            raise CommandError(f"Invalid collection name: {'; '.join(exc.messages)}") from exc
        finally:
            bar.finish()

        for outcome in report.outcomes:
            if outcome.problem:
                self.stderr.write(f"Skipped {outcome.path}: {outcome.problem}")
            elif outcome.result is not None:
                result = outcome.result
                self.stdout.write(f"{result.action.value:9} {outcome.path} ({result.chunk_count} chunks)")
        for path in report.ignored:
            self.stdout.write(f"ignored   {path} (unsupported type)")
        self.stdout.write(report.summary())
        if report.problems:
            raise CommandError(f"{len(report.problems)} file(s) were skipped; the others were ingested.")
