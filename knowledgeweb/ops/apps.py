"""The ops app: connects the failed-login counter when Django starts."""

from __future__ import annotations

from django.apps import AppConfig


class OpsConfig(AppConfig):
    name = "knowledgeweb.ops"
    label = "ops"
    verbose_name = "Operations"

    def ready(self) -> None:
        from knowledgeweb.ops import logins

        logins.connect()
