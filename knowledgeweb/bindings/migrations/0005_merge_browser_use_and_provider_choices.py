"""Joins two migrations written in parallel: browser use (0004) and the provider choices read from the registry (0004)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("bindings", "0004_binding_browser_use"),
        ("bindings", "0004_provider_choices_from_the_registry"),
    ]

    operations: list[migrations.operations.base.Operation] = []
