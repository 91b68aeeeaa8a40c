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

# Under pytest-xdist (`make test-fast`, `make test`) each worker has its own test database
# (pytest-django adds the worker's id to its name); on a shared Redis each keeps its keys
# under its own prefix and clears only those (tests/worker_cache.py).
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if _WORKER and CACHES["default"]["BACKEND"] == "knowledgeweb.ops.cache.ResilientRedisCache":  # noqa: F405
    CACHES["default"] = {  # noqa: F405
        **CACHES["default"],  # noqa: F405
        "BACKEND": "tests.worker_cache.WorkerRedisCache",
        "KEY_PREFIX": f"kw-test-{_WORKER}",
    }

# SQLite's test database is a file, not Django's shared-cache in-memory database: in shared
# cache, a writer waiting for another gets "database table is locked" at once instead of
# waiting for the lock, so concurrent writers would fail where the real file database (whose
# transactions begin with BEGIN IMMEDIATE and wait; knowledgeweb/settings.py) serializes them.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    import tempfile

    DATABASES["default"]["TEST"] = {  # noqa: F405
        "NAME": os.path.join(tempfile.gettempdir(), f"knowledgeweb-test-{os.getpid()}.sqlite3"),
    }
    # A throwaway database need not survive a power cut: no fsync on every commit.
    DATABASES["default"]["OPTIONS"]["init_command"] = "PRAGMA synchronous=OFF;"  # noqa: F405
