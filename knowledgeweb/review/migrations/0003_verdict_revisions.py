"""Threads judged before verdict revisions existed start at revision 1: a page reads the
verdicts of a thread whose revision is not 0 (decision 0110)."""

from typing import Any

from django.db import migrations


def judged_threads_have_a_revision(apps: Any, schema_editor: Any) -> None:
    Thread = apps.get_model("threads", "Thread")
    Verdict = apps.get_model("review", "Verdict")
    judged = Verdict.objects.values("thread_id").distinct()
    Thread.objects.filter(pk__in=judged, verdict_revision=0).update(verdict_revision=1)


class Migration(migrations.Migration):
    dependencies = [
        ("review", "0002_reservation_slots"),
        ("threads", "0014_verdict_revision"),
    ]

    operations = [migrations.RunPython(judged_threads_have_a_revision, migrations.RunPython.noop)]
