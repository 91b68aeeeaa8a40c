"""``manage.py create_token USER``: issue a personal API token and print it once."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledgeweb.accounts.services import token_create


class Command(BaseCommand):
    help = "Issue a personal API token for USER. The token is printed once; only its hash is stored."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="", help="A label to tell the token apart later.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            user = User.objects.get(username=options["username"])
        except User.DoesNotExist as exc:
            raise CommandError(f"No user named {options['username']!r}.") from exc
        if not user.is_active:
            raise CommandError(f"User {user.username!r} is inactive; its tokens would not authenticate.")
        token, raw = token_create(user=user, name=options["name"])
        self.stderr.write(
            f"Token {token.prefix}… for {user.username}. Copy it now: it is not stored and cannot be shown again."
        )
        self.stdout.write(raw)
