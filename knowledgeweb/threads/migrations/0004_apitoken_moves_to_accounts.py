"""ApiToken now belongs to the accounts app; its table stays where it is."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("threads", "0003_backfill_thread_tallies"),
        ("accounts", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="ApiToken")],
            database_operations=[],
        ),
    ]
