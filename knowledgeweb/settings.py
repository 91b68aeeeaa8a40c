"""Django settings, read from the environment (see docs/operations.md#configuration)."""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from django.core.management.utils import get_random_secret_key

from knowledgeweb.environment import (
    cache_from_url,
    database_from_url,
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_list,
    env_proxy_ssl_header,
    env_rate,
    env_str,
)

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", default=False)

_secret = env_str("SECRET_KEY")
if not _secret:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    # A fresh key per process is fine for development; sessions simply end on restart.
    _secret = get_random_secret_key()
SECRET_KEY = _secret

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"] if DEBUG else [])

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "ninja",
    "knowledgeweb.accounts",
    "knowledgeweb.threads",
    "knowledgeweb.bindings",
    "knowledgeweb.library",
    "knowledgeweb.jobs",
    "knowledgeweb.composer",
    "knowledgeweb.review",
    "knowledgeweb.web",
    "knowledgeweb.demo",
    "knowledgeweb.mcp_server",
    "knowledgeweb.ops",
    # After the apps: its ready() loads every admin module, and the binding form reads the
    # provider registry, which the library app completes in its own ready() (the local index).
    "django.contrib.admin",
]

MIDDLEWARE = [
    # Outermost: one log line per request (with its id), then JSON for every API error
    # whoever produced it, then the health probes (answered before host checks and
    # HTTPS redirects, so a load balancer's plain-HTTP probe by IP works).
    "knowledgeweb.ops.requestlog.RequestLogMiddleware",
    "knowledgeweb.ops.apierrors.ApiJsonErrorsMiddleware",
    "knowledgeweb.ops.health.HealthProbeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Static files answer here, already compressed; nothing below runs for them.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Pages and JSON (docs/decisions/0013-serving-in-production.md: why compression is safe here).
    "django.middleware.gzip.GZipMiddleware",
    "knowledgeweb.web.middleware.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "knowledgeweb.ops.logins.LoginRateLimitMiddleware",
    # Innermost, so its process_exception runs first: a view that cannot reach the
    # database answers 503 and logs one throttled line (knowledgeweb/ops/database.py).
    "knowledgeweb.ops.database.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "knowledgeweb.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "knowledgeweb.wsgi.application"

DATABASES = {
    "default": database_from_url(
        env_str("DATABASE_URL") or "sqlite:///var/knowledgeweb.sqlite3",
        base_dir=str(BASE_DIR),
        # 0: each request opens its connection when it needs one and closes it at its end,
        # so no idle thread holds one, none outlives a database restart, and recovery after
        # an outage is immediate (docs/decisions/0030-database-pressure.md; ops/database.py).
        conn_max_age=env_int("DB_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Every transaction takes SQLite's write lock when it begins (BEGIN IMMEDIATE), waiting
    # for it like any write, so one that reads before it writes cannot fail with "database
    # is locked" half-way: the one way to write under SQLite's lock, with no retry loops.
    DATABASES["default"].setdefault("OPTIONS", {})["transaction_mode"] = "IMMEDIATE"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

CACHES = {
    "default": cache_from_url(
        env_str("CACHE_URL") or "locmem://",
        timeout=env_float("CACHE_TIMEOUT", 0.2, maximum=10),
    )
}
# After a cache failure, each process skips the cache this long before trying again.
CACHE_RETRY_AFTER = env_float("CACHE_RETRY_AFTER", 5.0, maximum=3600)

# Seconds a memoized validation is kept (docs/decisions/0016-render-at-write.md): a day.
KNOWLEDGEWEB_CACHE_TTL = env_int("KNOWLEDGEWEB_CACHE_TTL", 86_400, minimum=1)

# While the database refuses connections, one log line per kind of failure per this many seconds.
DB_FAILURE_LOG_INTERVAL = env_float("DB_FAILURE_LOG_INTERVAL", 10.0, maximum=3600)

# The task queue (docs/decisions/0042-tasks-uploads-and-long-work-on-celery.md). No broker (the default): every task runs
# in-process, inside the request or command that starts it. With a broker (Redis), workers
# started with `celery -A knowledgeweb worker` run them, on this machine or others.
TASK_BROKER_CONFIGURED = bool(env_str("CELERY_BROKER_URL"))
# In-process, Celery still builds a connection object: an in-memory one never dials out.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL") or "memory://"
CELERY_TASK_ALWAYS_EAGER = not TASK_BROKER_CONFIGURED
CELERY_TASK_EAGER_PROPAGATES = True
# A task is acknowledged when it ends, so a killed worker's task is delivered again...
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
# Every task is stopped after this many seconds (the soft limit a minute earlier lets it
# record why in its job row).
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 1800, minimum=60)
CELERY_TASK_SOFT_TIME_LIMIT = CELERY_TASK_TIME_LIMIT - 30
# ...and Redis delivers an unacknowledged task again after this long: it must be longer
# than any task may run, or a long task still running would be run twice at once.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_TASK_TIME_LIMIT * 2 + 600}
# A job's lease: its worker renews it after every file or thread; another worker may take
# the job over once it has run out (a killed worker's job resumes where it stopped).
JOB_LEASE_SECONDS = env_int("JOB_LEASE_SECONDS", 300, minimum=1)

# /readyz: how long the database and the cache each get to answer.
READINESS_TIMEOUT = env_float("READINESS_TIMEOUT", 2.0, maximum=60)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "web:thread-list"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT") or BASE_DIR / "staticfiles")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Hashed names (cached for a year by browsers) with gzip copies made by
    # collectstatic; WhiteNoise serves them (`make serve` collects first).
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

# HTTPS, usually behind a TLS-terminating proxy (docs/operations.md#serving-in-production).
SECURE_PROXY_SSL_HEADER = env_proxy_ssl_header("SECURE_PROXY_SSL_HEADER")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", default=[])
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=False)
# Probes come from the proxy or the orchestrator over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=False)
# How many proxies in front of us append to X-Forwarded-For; 0 trusts none of it and
# the client address is the socket's peer (knowledgeweb/ops/clients.py).
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0, maximum=10)

# Cookies travel only over HTTPS once DEBUG is off; a plain-HTTP trial says so explicitly.
SECURE_COOKIES = env_bool("SECURE_COOKIES", default=not DEBUG)
SESSION_COOKIE_SECURE = SECURE_COOKIES
CSRF_COOKIE_SECURE = SECURE_COOKIES
SESSION_COOKIE_HTTPONLY = True
# Pages carry the CSRF token in their forms; no script reads the cookie.
CSRF_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Rate limits ("N/second|minute|hour", or "off"), counted in the shared cache so
# every worker sees the same count (knowledgeweb/ops/ratelimit.py).
RATE_LIMITS = {
    # Searches per API token (or per session user).
    "search": env_rate("RATE_LIMIT_SEARCH", "60/minute"),
    # Questions per user, for any ask endpoint that enforces it.
    "ask": env_rate("RATE_LIMIT_ASK", "20/minute"),
    # Writes per API token (or per session user): thread creations, appends, imports.
    "write": env_rate("RATE_LIMIT_WRITE", "120/minute"),
    # Failed bearer-token checks per client address; past it a wrong token answers 429 (a
    # valid one is always accepted).
    "token_failure": env_rate("RATE_LIMIT_TOKEN_FAILURES", "20/minute"),
    # Failed sign-ins (site and admin) per client address.
    "login_failure": env_rate("RATE_LIMIT_LOGIN_FAILURES", "10/minute"),
}
# Part of every limiter key; the test suite gives each test its own.
RATE_LIMIT_NAMESPACE = "rl"

# Largest request body the API accepts; larger bodies answer 413 before parsing.
DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

# Quotas on what one thread and one user may store (knowledgeweb.threads.quotas;
# docs/operations.md#configuration). Bytes are UTF-8 bytes of message content plus artifact JSON.
QUOTA_THREAD_MESSAGES = env_int("KNOWLEDGEWEB_QUOTA_THREAD_MESSAGES", 5_000, minimum=1)
QUOTA_THREAD_BYTES = env_int("KNOWLEDGEWEB_QUOTA_THREAD_BYTES", 32 * 1024 * 1024, minimum=1)
QUOTA_USER_THREADS = env_int("KNOWLEDGEWEB_QUOTA_USER_THREADS", 5_000, minimum=1)
QUOTA_USER_BYTES = env_int("KNOWLEDGEWEB_QUOTA_USER_BYTES", 512 * 1024 * 1024, minimum=1)
# Providers (docs/operations.md#configuration): no binding's timeout, which bounds a whole search,
# may exceed this ceiling; keep the server's worker timeout above it.
KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING = env_int(
    "KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING", 60, minimum=1, maximum=120
)
# How long a RAGFlow selection whose documents were all confirmed searchable is
# searched again without a new check (seconds; 0 checks on every search).
KNOWLEDGEWEB_RAGFLOW_SELECTION_TTL = env_int(
    "KNOWLEDGEWEB_RAGFLOW_SELECTION_TTL", 300, minimum=0, maximum=86400
)
LOG_LEVEL = env_choice("LOG_LEVEL", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"), "INFO")
LOG_FORMAT = env_choice("LOG_FORMAT", ("text", "json"), "text")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "knowledgeweb.ops.logs.RequestIdFilter"},
        # A database connection failure: one line per kind per interval, no traceback.
        "database_failures": {"()": "knowledgeweb.ops.database.DatabaseFailureLogFilter"},
    },
    "formatters": {
        # Both redact credentials in URLs and the configured passwords (ops/redaction.py).
        "text": {
            "()": "knowledgeweb.ops.logs.RedactingFormatter",
            "format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s",
        },
        "json": {"()": "knowledgeweb.ops.logs.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["request_id", "database_failures"],
        }
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        # Our request line already records every 4xx; Django's would say it twice.
        "django.request": {"level": "ERROR"},
    },
}

# DEBUG's error page and error reports: no password from a URL, a setting or the environment.
DEFAULT_EXCEPTION_REPORTER = "knowledgeweb.ops.redaction.RedactingExceptionReporter"
DEFAULT_EXCEPTION_REPORTER_FILTER = "knowledgeweb.ops.redaction.RedactingReporterFilter"
