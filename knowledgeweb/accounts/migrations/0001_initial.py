"""ApiToken moves here from the threads app. Its table keeps its name, so only Django's
state changes: no rows are copied and no table is created."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("threads", "0003_backfill_thread_tallies"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ApiToken",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("name", models.CharField(blank=True, max_length=100)),
                        ("prefix", models.CharField(editable=False, max_length=16)),
                        ("digest", models.CharField(editable=False, max_length=64, unique=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("last_used_at", models.DateTimeField(blank=True, editable=False, null=True)),
                        ("is_active", models.BooleanField(default=True)),
                        (
                            "user",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="api_tokens",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "API token",
                        "ordering": ["-created_at"],
                        "db_table": "threads_apitoken",
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
