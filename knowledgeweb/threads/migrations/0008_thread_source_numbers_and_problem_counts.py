"""One numbering and the problem counters (issue 24).

``Thread.source_numbers`` holds each cited source's number in the thread (order of first
citation), ``Thread.citations_mismatched`` and ``Thread.answers_uncited`` count the label
mismatches and the answers that cite nothing, and ``MessageRender.uncited`` marks such an
answer. ``MessageRender.text`` holds the words a reader sees, which the thread search matches
(never link targets or markup). Existing threads are filled in from their stored renders and
messages; a render from an older renderer is re-rendered on its next read anyway, which counts
its thread again.
"""

from django.db import migrations, models


def backfill(apps, schema_editor):  # type: ignore[no-untyped-def]
    from knowledgeweb.knowledge.linkgrammar import parse_markdown
    from knowledgeweb.threads.rendering.claims import answer_text
    from knowledgeweb.threads.tallies import answer_uncited, tallies_of

    Thread = apps.get_model("threads", "Thread")
    MessageRender = apps.get_model("threads", "MessageRender")
    for thread in Thread.objects.all().only("pk").iterator(chunk_size=200):
        rows = list(
            MessageRender.objects.filter(thread_id=thread.pk)
            .select_related("message")
            .only(
                "pk",
                "seq",
                "html",
                "citations",
                "uncited",
                "text",
                "message__type",
                "message__tool_calls",
                "message__content",
            )
            .order_by("seq")
        )
        changed = []
        for row in rows:
            flag = row.message.type == "ai" and answer_uncited(
                html=row.html, tool_calls=row.message.tool_calls, citations=row.citations
            )
            kind = row.message.type
            text = "" if kind == "tool" else row.message.content
            if kind == "ai":
                text = answer_text(parse_markdown(row.message.content))
            if flag != row.uncited or text != row.text:
                row.uncited, row.text = flag, text
                changed.append(row)
        if changed:
            MessageRender.objects.bulk_update(changed, ["uncited", "text"], batch_size=500)
        Thread.objects.filter(pk=thread.pk).update(**tallies_of(rows))


class Migration(migrations.Migration):
    dependencies = [
        ("threads", "0007_render_renderer_version"),
    ]

    operations = [
        migrations.AddField(
            model_name="thread",
            name="citations_mismatched",
            field=models.PositiveIntegerField(default=0, editable=False),
        ),
        migrations.AddField(
            model_name="thread",
            name="answers_uncited",
            field=models.PositiveIntegerField(default=0, editable=False),
        ),
        migrations.AddField(
            model_name="thread",
            name="source_numbers",
            field=models.JSONField(blank=True, default=dict, editable=False),
        ),
        migrations.AddField(
            model_name="messagerender",
            name="uncited",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="messagerender",
            name="text",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
