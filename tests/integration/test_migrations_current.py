"""The models and the migrations agree: ``makemigrations --check`` finds nothing to write.

In particular the binding's provider choices, read from the provider registry (which the
library app completes from its ``ready()``), need no migration of their own.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_makemigrations_finds_nothing_to_write() -> None:
    out = StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out, stderr=StringIO())
    assert "No changes detected" in out.getvalue()
