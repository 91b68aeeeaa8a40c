"""Settings for the test suite: the real settings, with a fixed throwaway key."""

import os

os.environ.setdefault("SECRET_KEY", "test-only-key-not-secret-0123456789abcdefghijklmnopqrstuvwxyz")

from knowledgeweb.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
