"""Django settings, read from the environment (see README, "Configuration")."""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from django.core.management.utils import get_random_secret_key

from knowledgeweb.environment import (
    cache_from_url,
    database_from_url,
    env_bool,
    env_bounded_int,
    env_int,
    env_list,
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
    "django.contrib.admin",
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
    "knowledgeweb.composer",
    "knowledgeweb.web",
    "knowledgeweb.demo",
    "knowledgeweb.mcp_server",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "knowledgeweb.web.middleware.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
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
        env_str("DATABASE_URL") or "sqlite:///var/knowledgeweb.sqlite3", base_dir=str(BASE_DIR)
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

CACHES = {"default": cache_from_url(env_str("CACHE_URL") or "locmem://")}

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
STATIC_ROOT = BASE_DIR / "staticfiles"

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Largest request body the API accepts; larger bodies answer 413 before parsing.
DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

# Quotas on what one thread and one user may store (knowledgeweb.threads.quotas; README
# "Configuration"). Bytes are UTF-8 bytes of message content plus artifact JSON.
QUOTA_THREAD_MESSAGES = env_int("KNOWLEDGEWEB_QUOTA_THREAD_MESSAGES", 5_000)
QUOTA_THREAD_BYTES = env_int("KNOWLEDGEWEB_QUOTA_THREAD_BYTES", 32 * 1024 * 1024)
QUOTA_USER_THREADS = env_int("KNOWLEDGEWEB_QUOTA_USER_THREADS", 5_000)
QUOTA_USER_BYTES = env_int("KNOWLEDGEWEB_QUOTA_USER_BYTES", 512 * 1024 * 1024)
# Providers (README "Configuration"): no binding's timeout, which bounds a whole search,
# may exceed this ceiling; keep the server's worker timeout above it.
KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING = env_bounded_int(
    "KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING", 60, minimum=1, maximum=120
)
# How long a RAGFlow selection whose documents were all confirmed searchable is
# searched again without a new check (seconds; 0 checks on every search).
KNOWLEDGEWEB_RAGFLOW_SELECTION_TTL = env_bounded_int(
    "KNOWLEDGEWEB_RAGFLOW_SELECTION_TTL", 300, minimum=0, maximum=86400
)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL") or "INFO"},
}
