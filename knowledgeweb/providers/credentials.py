"""Credentials come from the environment variable a binding names, read at use."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from knowledgeweb.providers.errors import MissingCredentialError

#: What an environment variable name looks like (POSIX portable names).
ENV_NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")

#: Every key variable a binding names starts with this, so that no binding can name
#: the app's own secrets (``SECRET_KEY``, ``DATABASE_URL``...) and send them upstream.
KEY_ENV_PREFIX = "KNOWLEDGEWEB_KEY_"


def key_env_problem(env_name: str, *, owner: str = "a binding", example: str = "RAGFLOW") -> str | None:
    """Why ``env_name`` may not hold the key of ``owner`` ("a binding", "an answer model"); ``None`` when it may.

    The message never repeats the name: an admin may have pasted the key itself.
    """
    if not ENV_NAME_PATTERN.fullmatch(env_name or ""):
        return (
            f"Enter the NAME of an environment variable (letters, digits and '_', e.g. {KEY_ENV_PREFIX}{example}), "
            "not the key itself."
        )
    if not env_name.startswith(KEY_ENV_PREFIX) or env_name == KEY_ENV_PREFIX:
        return (
            f"The key variable's name must start with {KEY_ENV_PREFIX} (e.g. {KEY_ENV_PREFIX}{example}): "
            f"{owner} may read only variables set aside for keys, never the app's own settings "
            "such as SECRET_KEY, DATABASE_URL or CACHE_URL."
        )
    return None


def key_env_is_set(env_name: str, *, environ: Mapping[str, str] | None = None) -> bool:
    """Whether a permitted key variable holds a value; a refused name is never read. The value is never returned."""
    if key_env_problem(env_name) is not None:
        return False
    source = os.environ if environ is None else environ
    return bool((source.get(env_name) or "").strip())


def credential_from_environment(env_name: str, *, environ: Mapping[str, str] | None = None) -> str:
    """Return the credential stored in ``env_name``; raise ``MissingCredentialError`` when unset or blank.

    The message names the variable, never a value.
    """
    if not ENV_NAME_PATTERN.fullmatch(env_name or ""):
        raise MissingCredentialError(
            "The binding does not name a valid environment variable for its API key; no request was sent."
        )
    if key_env_problem(env_name) is not None:
        # Checked again at use: a binding edited in the database must not read SECRET_KEY either.
        raise MissingCredentialError(
            f"The binding's key variable does not start with {KEY_ENV_PREFIX}, so it was not read; "
            "no request was sent."
        )
    source = os.environ if environ is None else environ
    value = (source.get(env_name) or "").strip()
    if not value:
        raise MissingCredentialError(
            f"The environment variable {env_name} that holds this binding's API key is not set; "
            "no request was sent."
        )
    return value
