"""Key variables must start with KNOWLEDGEWEB_KEY_; local bindings may select collections.

Bindings saved before the prefix rule that name another variable are disabled,
never renamed: renaming the variable would break a running deployment, and the
admin says what to rename (docs/decisions/0004-key-variables-start-with-knowledgeweb-key.md).
"""

from typing import Any

from django.db import migrations, models

# Frozen here: a migration must not change meaning when the code's constant does.
KEY_ENV_PREFIX = "KNOWLEDGEWEB_KEY_"


def disable_unprefixed_key_variables(apps: Any, schema_editor: Any) -> None:
    binding_model = apps.get_model("bindings", "KnowledgeBinding")
    refused = binding_model.objects.exclude(api_key_env="").filter(
        ~models.Q(api_key_env__startswith=KEY_ENV_PREFIX) | models.Q(api_key_env=KEY_ENV_PREFIX)
    )
    refused.update(enabled=False)


class Migration(migrations.Migration):
    dependencies = [
        ("bindings", "0002_binding_display_and_modes"),
    ]

    operations = [
        migrations.AlterField(
            model_name="knowledgebinding",
            name="api_key_env",
            field=models.CharField(
                blank=True,
                help_text="The NAME of the environment variable that holds the API key; it must start with "
                "KNOWLEDGEWEB_KEY_, e.g. KNOWLEDGEWEB_KEY_RAGFLOW. The key itself is read at use and never "
                "stored. Leave empty for the local index.",
                max_length=128,
                verbose_name="API key env",
            ),
        ),
        migrations.AlterField(
            model_name="knowledgebinding",
            name="scope",
            field=models.CharField(
                choices=[
                    ("all", "All (everything the credential can see)"),
                    ("disabled", "Disabled (no searches)"),
                    ("selected", "Selected: RAGFlow datasets and documents, or local collections"),
                ],
                default="all",
                max_length=16,
            ),
        ),
        migrations.RunPython(disable_unprefixed_key_variables, migrations.RunPython.noop, elidable=False),
    ]
