"""Every rule an answer model must satisfy, as plain checks (run on save and again at use)."""

from __future__ import annotations

from typing import Any

from knowledgeweb.bindings.rules import timeout_ceiling
from knowledgeweb.providers.connection_rules import agent_names_problems, name_problem, url_problem
from knowledgeweb.providers.credentials import KEY_ENV_PREFIX
from knowledgeweb.providers.credentials import key_env_problem as binding_key_env_problem

# Key variables share the knowledge bindings' prefix rule (KEY_ENV_PREFIX), so no answer
# model can name the app's own secrets (SECRET_KEY, DATABASE_URL...) and send them upstream.
__all__ = ["KEY_ENV_PREFIX", "answer_model_problems", "key_env_problem"]
TEMPERATURE_RANGE = (0.0, 2.0)
MAX_TOKENS_RANGE = (1, 32_768)
#: Characters of evidence sent to the model (see ``knowledgeweb.composer.prompt``).
CONTEXT_BUDGET_RANGE = (500, 400_000)
#: Seconds; the upper end is further capped by the knowledge bindings' ceiling
#: (KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING, see ``timeout_ceiling``).
TIMEOUT_RANGE = (1, 120)
MAX_MODEL_NAME = 200

Problems = dict[str, list[str]]


def key_env_problem(env_name: str) -> str | None:
    """Why ``env_name`` may not hold an answer model's key; ``None`` when it may (empty: no key needed)."""
    if not env_name:
        return None
    return binding_key_env_problem(env_name, owner="an answer model", example="OPENAI")


def answer_model_problems(
    *,
    name: str,
    base_url: str,
    model: str,
    api_key_env: str,
    temperature: Any,
    max_output_tokens: Any,
    context_budget: Any,
    timeout: Any,
    agent_names: Any,
) -> Problems:
    """Everything wrong with an answer model, keyed by field; empty when it is valid."""
    problems: Problems = {}

    def add(field: str, message: str) -> None:
        problems.setdefault(field, []).append(message)

    name_refusal = name_problem(name)
    if name_refusal:
        add("name", name_refusal)
    if not base_url:
        add("base_url", "Enter the server's OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1.")
    else:
        url_refusal = url_problem(base_url)
        if url_refusal:
            add("base_url", url_refusal)
    if not (model or "").strip() or model != model.strip() or len(model) > MAX_MODEL_NAME:
        add("model", f"Enter the model's name as the server knows it (1-{MAX_MODEL_NAME} characters).")
    key_problem = key_env_problem(api_key_env or "")
    if key_problem:
        add("api_key_env", key_problem)
    low, high = TEMPERATURE_RANGE
    if (
        not isinstance(temperature, int | float)
        or isinstance(temperature, bool)
        or not low <= temperature <= high
    ):
        add("temperature", f"Enter a temperature from {low:g} to {high:g}.")
    _check_range(add, "max_output_tokens", max_output_tokens, MAX_TOKENS_RANGE, "tokens")
    _check_range(add, "context_budget", context_budget, CONTEXT_BUDGET_RANGE, "characters")
    ceiling = timeout_ceiling()
    if (
        not isinstance(timeout, int)
        or isinstance(timeout, bool)
        or not TIMEOUT_RANGE[0] <= timeout <= ceiling
    ):
        add(
            "timeout",
            f"Enter a whole number from {TIMEOUT_RANGE[0]} to {ceiling} seconds: the timeout bounds the whole "
            f"answer, and KNOWLEDGEWEB_PROVIDER_TIMEOUT_CEILING allows at most {ceiling}.",
        )
    for problem in agent_names_problems(agent_names):
        add("agent_names", problem)
    return problems


def _check_range(add: Any, field: str, value: Any, bounds: tuple[int, int], unit: str) -> None:
    low, high = bounds
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        add(field, f"Enter a whole number from {low:,} to {high:,} {unit}.")
