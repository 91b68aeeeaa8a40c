"""Streamed answers: time to the first streamed byte of the answer through ``/ask/stream/``
against a bare streaming call to the same model server.

A loopback stand-in speaks OpenAI's streamed chat completions and waits a fixed
time before its first byte, standing in for a model's time to first token (a
small local model on a GPU takes 100-500 ms; 150 ms is at the fast end). Both
sides are timed in the same run, taking turns, over real HTTP:

- bare: ``POST {base}/chat/completions`` with ``stream: true`` from a new ``httpx.Client``,
        timed to the first ``data:`` line that carries answer text;
- ask:  ``POST /ask/stream/`` to this app served by a threaded WSGI server (a session
        cookie and CSRF token, as the page's script sends them), timed to the first
        ``event: sentence`` line (the stream relays completed sentences only, each once):
        the login check, the form, the answer model's checks,
        a search of the local index, the prompt under the context budget, the model call.

Target: ask <= 1.1 x bare + 5 ms.
"""

from __future__ import annotations

import os
import secrets
import sys
import threading
from typing import Any

if __package__ in {None, ""}:
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))

from bench.harness import finish, info, interleaved_medians, setup_django, show_time, verdict

REPEAT = 15
#: A model's time to first token: the fast end of a small local model, and a more typical one.
FIRST_TOKEN_SECONDS = (0.150, 0.500)
ANSWER = "Kingfishers dive for fish from a perch. They nest in river banks. " * 4


def main() -> int:
    # Thirty-odd questions a minute from one user: the per-user ask limit would refuse them.
    os.environ["RATE_LIMIT_ASK"] = "off"
    setup_django()
    import httpx
    from django.contrib.auth.models import User
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
    from django.core.wsgi import get_wsgi_application
    from django.test import Client

    from knowledgeweb.bindings.services import binding_create
    from knowledgeweb.composer.models import AnswerModel
    from knowledgeweb.library.services import ChunkDraft, collection_get_or_create, document_ingest
    from knowledgeweb.providers.client import _tls_context
    from tests.standins.chat_server import Reply, serve

    user = User.objects.create_user("bench", password="bench-password-not-secret")
    binding_create(name="local", provider="local", tools=["knowledge_search"], users=[user])
    collection = collection_get_or_create(name="birds")
    for number in range(50):
        document_ingest(
            collection=collection,
            source_key=f"n{number}",
            content_hash=f"n{number}",
            title=f"Note {number}",
            source_url="",
            chunks=[ChunkDraft(f"Kingfishers dive for fish, note {number}. They nest in river banks. " * 6)],
        )

    class QuietHandler(WSGIRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    delay = {"seconds": FIRST_TOKEN_SECONDS[0]}
    with serve(lambda body: Reply(text=ANSWER, first_byte_delay=delay["seconds"])) as model_server:
        model = AnswerModel(name="bench", base_url=model_server.base_url, model="standin", timeout=30)
        model.full_clean()
        model.save()
        model.users.add(user)

        app = ThreadedWSGIServer(("127.0.0.1", 0), QuietHandler)
        app.set_app(get_wsgi_application())
        threading.Thread(target=app.serve_forever, args=(0.05,), daemon=True).start()
        app_url = f"http://127.0.0.1:{app.server_address[1]}"

        client = Client()
        client.force_login(user)
        session = client.cookies["sessionid"].value
        # Cookies are Secure off DEBUG and this server is plain HTTP: send them by hand, with a
        # CSRF secret of our own (Django accepts a 32-character secret as cookie and token).
        csrf = secrets.token_hex(16)
        web = httpx.Client(
            base_url=app_url,
            headers={"Host": "testserver", "Cookie": f"sessionid={session}; csrftoken={csrf}"},
        )
        form = {
            "question": "kingfishers",
            "binding": "local",
            "composer": "bench",
            "csrfmiddlewaretoken": csrf,
        }

        def ask() -> None:
            with web.stream("POST", "/ask/stream/", data=form, headers={"X-CSRFToken": csrf}) as response:
                if response.status_code != 200:
                    raise SystemExit(f"/ask/stream/ answered {response.status_code}")
                for line in response.iter_lines():
                    if line.startswith("event: sentence"):
                        return
                raise SystemExit("/ask/stream/ sent no sentence")

        body = {
            "model": "standin",
            "stream": True,
            "messages": [{"role": "user", "content": "kingfishers"}],
        }

        def bare() -> None:
            # A new client per call, as each turn opens, sharing the process's TLS context as ours does.
            with (
                httpx.Client(trust_env=False, verify=_tls_context()) as http,
                http.stream("POST", model_server.base_url + "/chat/completions", json=body) as response,
            ):
                for line in response.iter_lines():
                    if line.startswith("data:") and '"content": "' in line and '"content": ""' not in line:
                        return
                raise SystemExit("the model server sent no content")

        ask()
        bare()  # warm both paths (imports, first connection)
        for seconds in FIRST_TOKEN_SECONDS:
            delay["seconds"] = seconds
            medians = interleaved_medians({"bare": bare, "ask": ask}, repeat=REPEAT)
            _report(seconds, medians)
        web.close()
        app.shutdown()
        app.server_close()
    return finish()


def _report(seconds: float, medians: dict[str, float]) -> None:
    print(f"Time to the first streamed answer byte, model's first token after {seconds * 1000:.0f} ms")
    show_time("bare streaming call to the model server", medians["bare"], repeat=REPEAT)
    show_time("POST /ask/stream/ (search + prompt + the same call)", medians["ask"], repeat=REPEAT)
    overhead = medians["ask"] - medians["bare"]
    print(f"  {'our own time':<58} {overhead * 1000:10.2f} ms")
    info("ask / bare", medians["ask"] / medians["bare"])
    # ask <= 1.1 x bare + 5 ms, as a ratio to the bare call
    verdict(
        f"compose: first answer byte, ask / bare, model's first token after {seconds * 1000:.0f} ms",
        medians["ask"] / medians["bare"],
        round(1.1 + 0.005 / medians["bare"], 3),
    )


if __name__ == "__main__":
    sys.exit(main())
