"""The provider choices are read from the registry when used (``provider_choices``), not frozen.

The local index registers itself from the library app's ``ready()``, after the models
are defined, so the choices are a callable; no column changes.
"""

from django.db import migrations, models

import knowledgeweb.bindings.choices


class Migration(migrations.Migration):
    dependencies = [
        ("bindings", "0003_disable_unprefixed_key_variables"),
    ]

    operations = [
        migrations.AlterField(
            model_name="knowledgebinding",
            name="provider",
            field=models.CharField(choices=knowledgeweb.bindings.choices.provider_choices, max_length=16),
        ),
    ]
