"""``manage.py demo``: ingest the sample corpus, create the demo user, binding and threads."""

from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from knowledgeweb.answers.errors import AnswerError
from knowledgeweb.demo.services import PASSWORD_ENV, demo_run
from knowledgeweb.library.progress import ProgressBar
from knowledgeweb.providers.credentials import KEY_ENV_PREFIX


class Command(BaseCommand):
    help = (
        "Load the shipped sample corpus into the local index, create a demo user with a local "
        "binding, and build demo threads through the real retrieval path. Safe to run again."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--rebuild", action="store_true", help="replace the demo threads instead of keeping them"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        bar = ProgressBar(self.stderr, interactive=self.stderr.isatty())

        def on_file(index: int, total: int, path: Path) -> None:
            bar.update(index, total, path.name)

        try:
            result = demo_run(rebuild=options["rebuild"], on_file=on_file)
        except AnswerError as exc:
            raise CommandError(f"A demo thread could not be built: {exc}") from exc
        finally:
            bar.finish()

        self.stdout.write(result.report.summary())
        for outcome in result.report.problems:
            self.stderr.write(f"Skipped {outcome.path}: {outcome.problem}")
        if result.report.problems:
            raise CommandError("The sample corpus did not ingest cleanly; see above.")
        self.stdout.write(
            f"Binding {result.binding.name!r} (local) is bound to {result.user.username!r}. "
            f"To add a RAGFlow or LightRAG binding in /admin/, put its key in a variable named "
            f"{KEY_ENV_PREFIX}... (e.g. {KEY_ENV_PREFIX}RAGFLOW) and enter that name."
        )
        for thread in result.created:
            self.stdout.write(f"Built thread  {thread.title}  /threads/{thread.id}/")
        for thread in result.kept:
            self.stdout.write(f"Kept thread   {thread.title}  /threads/{thread.id}/")
        self.stdout.write(
            self.style.SUCCESS("Demo ready.")
            + " Log in at http://127.0.0.1:8000/accounts/login/ with\n"
            + f"  username: {result.user.username}\n"
            + f"  password: {result.password}\n"
            + f"(a local demo password; set {PASSWORD_ENV} to choose another)"
        )
