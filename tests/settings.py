"""Settings for the test suite: the real settings, with a fixed throwaway key."""

import os

os.environ.setdefault("SECRET_KEY", "test-only-key-not-secret-0123456789abcdefghijklmnopqrstuvwxyz")

from knowledgeweb.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Templates resolve {% static %} without a collected manifest; the static-files tests
# switch the real (manifest) storage back on after collecting into a temporary folder.
STORAGES = {
    **STORAGES,  # noqa: F405
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# Nothing is collected for the suite (WhiteNoise would warn about a missing folder).
STATIC_ROOT = None  # type: ignore[assignment]
