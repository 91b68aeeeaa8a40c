"""Retrieval overhead: POST /api/knowledge/search against the bare provider call.

A loopback HTTP server serves a LightRAG-shaped ``/query/data`` response (20
chunks, synthetic). Both sides are timed in the same run against that server:

- bare: a POST from a new ``httpx.Client`` (one new connection, as each search
        opens) sharing one TLS context, the response decoded as JSON
- api:  ``POST /api/knowledge/search`` through Django's test client with a
        bearer token: authentication, binding checks, the adapter (streamed
        body under the 4 MiB cap), ``format_result``, the output budget, and
        the JSON response

The server answers in two ways. With no delay, the ratio isolates our own
cost against a provider that does nothing at all. With a fixed delay standing
in for the provider's own work (LightRAG embeds the query, searches vectors and
the graph; 50 ms is well below what a real hybrid query takes), the ratio is
what a caller actually sees.

The ratio to commit 51fda46 compares two differences of medians of 15 requests of
about 3 ms each, so a burst of load in one round moves it by a millisecond or more:
rounds of the pair gave 1.3-3.6 ms for either side on the shared 2-core machine.
It takes the median of nine rounds (five before; three before that), each round
running 51fda46's bench and then ours, and prints every round's figures, so one
unlucky round can neither pass nor fail the target. Each round measures exactly
what it did before; only the number of rounds grew.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

if __package__ in {None, ""}:
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))

from bench.harness import finish, info, interleaved_medians, setup_django, show_ratio, show_time

REPEAT = 15
#: The commit whose overhead on a search is the reference (issue 25: "about twice what it was").
BASELINE_COMMIT = "51fda46"
#: Runs of each side, taking turns: the baseline runs in its own process and database. Nine,
#: because one round's pair of figures can move by a millisecond under load (docstring).
BASELINE_ROUNDS = 9
_OVERHEAD = re.compile(r"our overhead\s+([0-9.]+) ms")
KEY_ENV = "KNOWLEDGEWEB_KEY_BENCH_LIGHTRAG"
KEY = "bench-lightrag-key-not-secret"


def lightrag_payload() -> bytes:
    """Synthetic, shaped after docs/providers.md (lightrag-hku 1.5.7 /query/data success)."""
    chunks = []
    references = []
    for n in range(1, 21):
        path = f"handbook-{n}.md"
        chunks.append(
            {
                "reference_id": str(n),
                "content": f"Synthetic chunk {n}. " + "Evidence about retrieval and citations. " * 12,
                "file_path": path,
                "chunk_id": f"doc-{n:032x}-chunk-000",
            }
        )
        references.append({"reference_id": str(n), "file_path": path})
    body = {
        "status": "success",
        "message": "Query processed successfully",
        "data": {"entities": [], "relationships": [], "chunks": chunks, "references": references},
        "metadata": {
            "query_mode": "mix",
            "keywords": {"high_level": [], "low_level": []},
            "processing_info": {},
        },
    }
    return json.dumps(body).encode()


class Upstream(BaseHTTPRequestHandler):
    payload = b""
    delay = 0.0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.delay:
            time.sleep(self.delay)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.payload)))
        self.end_headers()
        self.wfile.write(self.payload)

    def log_message(self, format: str, *args: Any) -> None:
        return


def main() -> int:
    os.environ[KEY_ENV] = KEY
    # Every search is checked against the limit as in production, but the bench's ~200
    # searches a minute must not be refused (a 429 would end the measurement).
    os.environ["RATE_LIMIT_SEARCH"] = "100000/minute"
    setup_django()
    import httpx
    from django.contrib.auth import get_user_model
    from django.test import Client

    from knowledgeweb.accounts.services import token_create
    from knowledgeweb.bindings.services import binding_create

    Upstream.payload = lightrag_payload()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{server.server_address[1]}"

    user = get_user_model().objects.create_user("bench")
    binding_create(
        name="bench-lightrag",
        provider="lightrag",
        base_url=base_url,
        api_key_env=KEY_ENV,
        tools=["knowledge_search"],
        users=[user],
    )
    _, token = token_create(user=user, name="bench")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    body = {"tool": "knowledge_search", "query": "how are citations verified?"}

    def api() -> None:
        response = client.post("/api/knowledge/search", body, content_type="application/json")
        if response.status_code != 200 or not response.json()["artifact"]["knowledge_sources"]:
            raise RuntimeError(f"search failed: {response.status_code} {response.content[:200]!r}")

    tls = httpx.create_ssl_context()

    def bare() -> None:
        with httpx.Client(verify=tls, trust_env=False) as bare_client:
            response = bare_client.post(
                f"{base_url}/query/data",
                json={"query": body["query"], "mode": "mix", "top_k": 20},
                headers={"X-API-Key": KEY},
            )
            response.raise_for_status()
            response.json()

    def measure(delay: float) -> tuple[float, float]:
        Upstream.delay = delay
        api()  # warm both paths once
        bare()
        medians = interleaved_medians({"bare": bare, "api": api}, repeat=REPEAT)
        return medians["bare"], medians["api"]

    baseline = _baseline_tree()
    if baseline is not None:
        # Side by side with the reference commit's code path: its own bench, in its own process,
        # taking turns with this code's, so a burst of load lands on both.
        print(f"Our overhead on a search, against commit {BASELINE_COMMIT}'s (instant provider)")
        ours: list[float] = []
        theirs: list[float] = []
        for _ in range(BASELINE_ROUNDS):
            then = _baseline_overhead(baseline)
            if then is None:
                break
            theirs.append(then)
            bare_s, api_s = measure(0.0)
            ours.append((api_s - bare_s) * 1000)
        if ours and theirs:
            now, then = statistics.median(ours), statistics.median(theirs)
            print(f"  {'each round, ours':<24} " + " ".join(f"{v:.2f}" for v in ours) + " ms")
            print(f"  {'each round, ' + BASELINE_COMMIT:<24} " + " ".join(f"{v:.2f}" for v in theirs) + " ms")
            print(f"  {'our overhead, median of ' + str(len(ours)) + ' runs':<58} {now:10.2f} ms")
            print(
                f"  {BASELINE_COMMIT + ' overhead, median of ' + str(len(theirs)) + ' runs':<58} {then:10.2f} ms"
            )
            show_ratio(f"retrieval: our overhead / {BASELINE_COMMIT}'s, instant provider", now / then, 1.0)
        else:
            print(f"  {BASELINE_COMMIT}'s bench did not report its overhead: no comparison")

    print("Retrieval overhead (POST /api/knowledge/search vs a bare httpx POST)")
    for delay in (0.0, 0.05):
        Upstream.delay = delay
        api()  # warm both paths once
        bare()
        medians = interleaved_medians({"bare": bare, "api": api}, repeat=REPEAT)
        bare_s, api_s = medians["bare"], medians["api"]
        print(f" provider answering after {delay * 1000:.0f} ms")
        show_time("bare httpx POST", bare_s, repeat=REPEAT)
        show_time("POST /api/knowledge/search", api_s, repeat=REPEAT)
        print(f"  {'our overhead':<58} {(api_s - bare_s) * 1000:10.2f} ms")
        if delay:
            show_ratio(
                f"retrieval: api / bare, provider answering after {delay * 1000:.0f} ms", api_s / bare_s, 1.2
            )
        else:
            # Against a provider that does nothing, our own 2-3 ms cannot stay within 20%
            # (README, "Performance"): a figure, not a target.
            info("api / bare", api_s / bare_s)
    server.shutdown()
    return finish()


def _baseline_tree() -> str | None:
    """The reference commit's files in a temporary directory (``git archive``), or None when
    this is not a git checkout holding it."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    target = tempfile.mkdtemp(prefix="knowledgeweb-baseline-")
    try:
        archive = subprocess.run(  # noqa: S603 - fixed git arguments
            ["git", "-C", root, "archive", BASELINE_COMMIT],  # noqa: S607 - git from PATH
            capture_output=True,
            check=True,
            timeout=60,
        )
        subprocess.run(  # noqa: S603 - fixed tar arguments
            ["tar", "-x", "-C", target],  # noqa: S607 - tar from PATH
            input=archive.stdout,
            check=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"  commit {BASELINE_COMMIT} is not available here ({exc}): no comparison")
        return None
    return target


def _baseline_overhead(tree: str) -> float | None:
    """The reference commit's own bench, run on its own code: its overhead against an instant
    provider, in ms (the first of the two it prints)."""
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "DJANGO_SETTINGS_MODULE"}}
    try:
        run = subprocess.run(
            [sys.executable, "bench/retrieval.py"],
            cwd=tree,
            capture_output=True,
            text=True,
            timeout=600,
            env=env,
        )
    except subprocess.SubprocessError:
        return None
    found = _OVERHEAD.findall(run.stdout)
    return float(found[0]) if found else None


if __name__ == "__main__":
    sys.exit(main())
