# Renders stored at write (MessageRender) and the server-owned tool view of a search.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("threads", "0004_apitoken_moves_to_accounts"),
    ]

    operations = [
        migrations.AddField(
            model_name="message",
            name="tool_view",
            field=models.JSONField(blank=True, editable=False, null=True),
        ),
        migrations.CreateModel(
            name="MessageRender",
            fields=[
                (
                    "message",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="render",
                        serialize=False,
                        to="threads.message",
                    ),
                ),
                ("seq", models.PositiveIntegerField()),
                ("fingerprint", models.CharField(max_length=32)),
                ("html", models.TextField(blank=True)),
                ("citations", models.JSONField(blank=True, default=list)),
                ("sources", models.JSONField(blank=True, default=list)),
                ("entries", models.JSONField(blank=True, default=dict)),
                ("export", models.JSONField(blank=True, default=list)),
                ("rendered_at", models.DateTimeField(auto_now=True)),
                (
                    "thread",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="renders",
                        to="threads.thread",
                    ),
                ),
            ],
            options={
                "ordering": ["thread", "seq"],
                "indexes": [models.Index(fields=["thread", "seq"], name="render_thread_seq")],
            },
        ),
    ]
