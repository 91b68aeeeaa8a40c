"""``manage.py import_thread FILE --owner USER [--trusted]``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledgeweb.threads.errors import ThreadsError
from knowledgeweb.threads.interchange.imports import thread_import_body


class Command(BaseCommand):
    help = (
        "Import a thread from a JSON file in any shape the API's import accepts: "
        "{'title', 'agent_name', 'messages': [...]} (also this project's JSON export), a bare list of "
        "LangChain / LangGraph / OpenAI / Anthropic messages, a LangGraph Platform thread state or "
        "/history list, or a LangServe response. All or nothing. Reserved evidence keys are stripped "
        "unless --trusted (admins only: the file then vouches for its evidence, which readers still "
        "validate)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="The JSON file to import ('-' is not accepted).")
        parser.add_argument("--owner", required=True, help="Username of the thread's owner.")
        parser.add_argument(
            "--title", help="Thread title (default: the file's title, else its first human message)."
        )
        parser.add_argument("--agent-name", dest="agent_name", help="Agent name (default: the file's).")
        parser.add_argument(
            "--trusted",
            action="store_true",
            help="Keep reserved evidence keys (knowledge_sources, ...) as written in the file.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"]
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CommandError(f"{path} is not valid JSON: {exc}.") from exc
        except RecursionError as exc:
            raise CommandError(f"{path} is nested too deeply to read as JSON.") from exc
        try:
            owner = User.objects.get(username=options["owner"])
        except User.DoesNotExist as exc:
            raise CommandError(f"No user named {options['owner']!r}.") from exc
        try:
            thread = thread_import_body(
                owner=owner,
                body=document,
                title=options["title"],
                agent_name=options["agent_name"],
                trusted=options["trusted"],
            )
        except ThreadsError as exc:
            raise CommandError(f"Nothing imported: {exc}") from exc
        trust = " (trusted: evidence keys kept)" if options["trusted"] else ""
        self.stdout.write(
            f"Imported {thread.message_count} messages into thread {thread.id} ({thread.title!r}){trust}."
        )
