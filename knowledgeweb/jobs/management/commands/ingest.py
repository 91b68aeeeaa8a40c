"""``manage.py ingest PATH... --collection NAME [--queue]``: index files into the local library.

The files are read here, on the machine running the command, with ingest's rules; their
bytes go into a folder-ingest job, which the job task stores (docs/decisions/0042-tasks-uploads-and-long-work-on-celery.md).
It lives in the jobs app because it starts a job (the layers contract: jobs sits above
library).
"""

from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from knowledgeweb.jobs.models import Job
from knowledgeweb.jobs.services import folder_job_create, folder_outcomes
from knowledgeweb.jobs.tasks import job_enqueue, job_run_task
from knowledgeweb.library.progress import ProgressBar
from knowledgeweb.library.selectors import collection_by_name
from knowledgeweb.library.services.collections import collection_name_validate
from knowledgeweb.library.services.ingest import IngestReport, paths_read

NO_BROKER = (
    "--queue needs a task broker: set CELERY_BROKER_URL (e.g. redis://127.0.0.1:6379/0) and start "
    "a worker (celery -A knowledgeweb worker), or leave out --queue to ingest here and wait. "
    "Nothing was read or written."
)


class Command(BaseCommand):
    help = (
        "Index Markdown, text, HTML and PDF files (directories are walked) into a local collection. "
        "Re-ingesting a file updates it; unusable files are reported and skipped. The files are read "
        "here and stored by a job; --queue hands the job to the Celery workers instead of waiting."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH", help="files or directories to index")
        parser.add_argument("--collection", required=True, help="the collection to index into")
        parser.add_argument(
            "--queue",
            action="store_true",
            help="send the job to the task queue (needs CELERY_BROKER_URL) and print its id, not wait",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["collection"].strip()
        if not name:
            raise CommandError("--collection must name a collection.")
        if options["queue"] and not settings.TASK_BROKER_CONFIGURED:
            raise CommandError(NO_BROKER)
        if collection_by_name(name=name) is None:
            try:
                collection_name_validate(name=name)
            except ValidationError as exc:
                raise CommandError(f"Invalid collection name: {'; '.join(exc.messages)}") from exc
        bar = ProgressBar(self.stderr, interactive=self.stderr.isatty())

        def on_file(index: int, total: int, path: Path) -> None:
            bar.update(index, total, path.name)

        files, ignored = paths_read(
            paths=[Path(p) for p in options["paths"]], key_root=Path.cwd(), on_file=on_file
        )
        try:
            job = folder_job_create(collection_name=name, files=files)
        finally:
            bar.finish()
        if options["queue"]:
            job_enqueue(job)
            for path in ignored:
                self.stdout.write(f"ignored   {path} (unsupported type)")
            self.stdout.write(
                f"Queued job {job.pk}: {job.total} file(s) for collection {name!r}; "
                "the admin's Jobs page shows its progress."
            )
            return
        # The same task entry point a worker runs, run here and waited for.
        job_run_task.apply(args=[job.pk], throw=True)
        job.refresh_from_db()
        self._report(job, name, ignored)

    def _report(self, job: Job, name: str, ignored: list[str]) -> None:
        report = IngestReport(collection_name=name, outcomes=folder_outcomes(job), ignored=ignored)
        for outcome in report.outcomes:
            if outcome.problem:
                self.stderr.write(f"Skipped {outcome.path}: {outcome.problem}")
            elif outcome.result is not None:
                result = outcome.result
                self.stdout.write(f"{result.action.value:9} {outcome.path} ({result.chunk_count} chunks)")
        for path in ignored:
            self.stdout.write(f"ignored   {path} (unsupported type)")
        self.stdout.write(report.summary())
        if job.state == Job.State.FAILED:
            raise CommandError(f"Job {job.pk} stopped: {job.message}")
        if report.problems:
            raise CommandError(f"{len(report.problems)} file(s) were skipped; the others were ingested.")
