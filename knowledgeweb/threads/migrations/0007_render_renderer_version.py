# A stored render names the renderer version that made it (threads.rendering.version) instead
# of a hash of the renderer's source files. Renders stored before carry 0: below every safe
# version, so they are never served as stored; `manage.py rerender` replaces them.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("threads", "0006_message_tool_calls_and_parts"),
    ]

    operations = [
        migrations.RemoveField(
            model_name="messagerender",
            name="fingerprint",
        ),
        migrations.AddField(
            model_name="messagerender",
            name="renderer_version",
            field=models.PositiveIntegerField(default=0),
        ),
    ]
