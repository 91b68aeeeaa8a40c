"""The admin's "Test connection" for an answer model: one tiny chat completion through the composer's client.

``composer/client.py`` sends it as it sends every answer (one deadline, no redirects,
the 4 MiB cap, the key from the environment, redacted from every message).
"""

from __future__ import annotations

import logging

from knowledgeweb.bindings.connection_test import OK, ConnectionTestResult
from knowledgeweb.composer.client import ChatServer, chat_stream
from knowledgeweb.composer.errors import ModelError, ModelFault
from knowledgeweb.composer.models import AnswerModel
from knowledgeweb.composer.selectors import answer_model_key

logger = logging.getLogger(__name__)

#: The test asks for a one-word answer; a server that stops at this limit still answered.
PROBE_TOKENS = 8
PROBE_MESSAGES = [{"role": "user", "content": "Reply with the single word OK."}]


def answer_model_connection_test(*, model: AnswerModel) -> ConnectionTestResult:
    """Ask the saved model for one word; never raises for the server's failure."""
    label = f"Answer model '{model.name}'"
    try:
        key = answer_model_key(model)  # the rules again, and the key from the environment
        server = ChatServer(
            label=label,
            base_url=model.base_url,
            model=model.model,
            timeout=float(model.timeout),
            temperature=0.0,
            max_output_tokens=PROBE_TOKENS,
            api_key=key,
        )
        answer = "".join(chat_stream(server, PROBE_MESSAGES))
    except ModelError as exc:
        if exc.code == ModelFault.LENGTH_LIMIT:
            result = ConnectionTestResult(
                OK, f"{label} answered ({model.model}); it stopped at the test's {PROBE_TOKENS}-token limit."
            )
        else:
            result = ConnectionTestResult(str(exc.code), exc.message)
    else:
        said = "an empty answer" if not answer.strip() else "a whole answer"
        result = ConnectionTestResult(OK, f"{label} answered with {said} ({model.model}).")
    logger.info("Connection test of answer model %s: %s: %s", model.name, result.code, result.message)
    return result
