"""The admin's "Test connection": one small real request through the binding's own client.

The request goes through ``providers/client.py`` exactly as a search does (one
deadline, no redirects, the 4 MiB cap, the key read from the environment at use and
redacted from every message), so what passes here is what a search will meet. The
outcome is a stable code and a plain message; neither ever holds the key.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from knowledgeweb.bindings.models import KnowledgeBinding
from knowledgeweb.bindings.rules import binding_problems, timeout_ceiling
from knowledgeweb.providers.credentials import credential_from_environment
from knowledgeweb.providers.errors import ProviderError, ProviderErrorCode
from knowledgeweb.providers.registry import provider_spec
from knowledgeweb.providers.spec import ProviderRequest

logger = logging.getLogger(__name__)

OK = "ok"


@dataclass(frozen=True)
class ConnectionTestResult:
    """What a connection test found: ``code`` is ``"ok"`` or the error code; ``message`` says it in words."""

    code: str
    message: str

    @property
    def ok(self) -> bool:
        return self.code == OK


def binding_connection_test(*, binding: KnowledgeBinding) -> ConnectionTestResult:
    """Test the saved binding; never raises for a provider's failure, and never sends without a valid config."""
    problems = binding_problems(**binding.rule_fields())
    if problems:
        fields = ", ".join(problems)
        return _outcome(
            binding,
            ConnectionTestResult(
                ProviderErrorCode.MISCONFIGURED.value,
                f"The binding breaks its rules ({fields}); fix and save it first. No request was sent.",
            ),
        )
    spec = provider_spec(binding.provider)
    if spec is None or spec.probe is None:
        label = spec.label if spec is not None else binding.provider
        return _outcome(
            binding, ConnectionTestResult(OK, f"{label} is built in: there is nothing to connect to.")
        )
    try:
        api_key = credential_from_environment(binding.api_key_env) if spec.remote else None
        request = ProviderRequest(
            api_key=api_key, selection=None, timeout=float(min(binding.timeout, timeout_ceiling()))
        )
        found = spec.probe(binding, request)
    except ProviderError as exc:
        # Provider errors are redacted when raised (providers/client.py), so the message is safe.
        return _outcome(binding, ConnectionTestResult(str(exc.code), exc.message))
    except Exception as exc:  # a bug in a probe is reported, never a 500 in the admin
        logger.error("Connection test of binding %s raised %s", binding.name, type(exc).__name__)
        return ConnectionTestResult(
            ProviderErrorCode.ADAPTER_ERROR.value,
            f"The connection test failed inside this application ({type(exc).__name__}); see the server log.",
        )
    return _outcome(binding, ConnectionTestResult(OK, found))


def _outcome(binding: KnowledgeBinding, result: ConnectionTestResult) -> ConnectionTestResult:
    logger.info("Connection test of binding %s: %s: %s", binding.name, result.code, result.message)
    return result
