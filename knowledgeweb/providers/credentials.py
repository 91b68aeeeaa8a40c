"""Credentials come from the environment variable a binding names, read at use."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from knowledgeweb.providers.errors import MissingCredentialError

#: What an environment variable name looks like (POSIX portable names).
ENV_NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


def credential_from_environment(env_name: str, *, environ: Mapping[str, str] | None = None) -> str:
    """Return the credential stored in ``env_name``; raise ``MissingCredentialError`` when unset or blank.

    The message names the variable, never a value.
    """
    if not ENV_NAME_PATTERN.match(env_name or ""):
        raise MissingCredentialError(
            "The binding does not name a valid environment variable for its API key; no request was sent."
        )
    source = os.environ if environ is None else environ
    value = (source.get(env_name) or "").strip()
    if not value:
        raise MissingCredentialError(
            f"The environment variable {env_name} that holds this binding's API key is not set; "
            "no request was sent."
        )
    return value
