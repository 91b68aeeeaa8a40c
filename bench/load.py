"""`make loadtest`: the production server under load, with slow providers in flight.

Starts `make serve` on PostgreSQL and Redis when they answer on 127.0.0.1 (SQLite and
the in-process cache otherwise, said so), against a local LightRAG-shaped provider
stand-in that answers (20 chunks after PROVIDER_DELAY, 50 ms) or, in the stalled phase,
never answers, so a search stalls until its binding's deadline. Then, for a bounded time
each:

1. idle: readers only, one reader thread per reader user (thread pages with a session,
   the thread API with a token);
2. stalled: the same readers while half the serving capacity (workers x threads / 2)
   is held by searches waiting on the stalled provider;
3. mixed: readers, appenders and searches the provider answers (each must bring back its
   sources);
4. reviewers: twenty reviewers working one review queue (``bench/review.py``): next,
   the thread's items, a verdict on each; verdicts stored = acknowledged, double
   reservations, p50/p99 of a verdict and of "next".

Prints the settings it used (rate limits, cookies, workers, threads), then requests
per second, p50 and p99 per route and phase, and errors (an unexpected status, a
transport error, or an answered search with no sources); and its target, page reads'
p99 with half the capacity stalled within 1.5x of idle, the median of the rounds'
ratios, as a verdict line (bench/harness.py). Writes its table, stamped with the commit,
into docs/performance.md (LOAD_DOCS to write elsewhere, LOAD_DOCS=- for nowhere). Exits
MISSED_EXIT when the target is missed and 1 when it could not measure.

Idle and stalled take turns over LOAD_ROUNDS rounds (default 3) of LOAD_SECONDS in all
(default 30) each; the mixed phase runs LOAD_SECONDS once.

Environment: LOAD_READERS (default: one per user, 20),
LOAD_DEADLINE (the binding timeout in whole seconds, default 2), LOAD_DATABASE_URL
(default postgres://postgres@127.0.0.1:5432/knowledgeweb_load, created when missing),
LOAD_CACHE_URL (default redis://127.0.0.1:6379/14, emptied first), WEB_WORKERS and
WEB_THREADS (passed to the server).
"""

from __future__ import annotations

import os
import platform
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import MISSED_EXIT, verdict  # noqa: E402 - after the path is set
from bench.run import LOAD_SECTION_END, LOAD_SECTION_START  # noqa: E402

KEY_VARIABLE = "KNOWLEDGEWEB_KEY_LOAD"
USERS = 20
MESSAGES_PER_THREAD = 40


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def answers(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=1).close()
    except OSError:
        return False
    return True


# -- the provider stand-in -------------------------------------------------------------

#: How long the stand-in takes to answer a search it answers (a provider's own work).
PROVIDER_DELAY = 0.05


class _Stall(BaseHTTPRequestHandler):
    """A LightRAG-shaped ``/query/data``: answers after ``PROVIDER_DELAY`` (synthetic chunks,
    bench/retrieval.py's payload), or, while ``stalled`` is set, says nothing until the client
    gives up (its deadline)."""

    stalled = False
    payload = b""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not type(self).stalled:
            time.sleep(PROVIDER_DELAY)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(self.payload)))
            self.end_headers()
            self.wfile.write(self.payload)
            return
        self.connection.settimeout(120)
        try:
            while self.connection.recv(1):  # returns b"" when the client closes
                pass
        except OSError:
            pass

    def log_message(self, format: str, *args: object) -> None:
        return


def start_stalled_provider() -> tuple[ThreadingHTTPServer, str]:
    from bench.retrieval import lightrag_payload

    _Stall.payload = lightrag_payload()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stall)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


# -- the deployment ----------------------------------------------------------------------


@dataclass
class Backends:
    database_url: str
    cache_url: str
    note: str


def choose_backends(
    workdir: Path,
    *,
    database: str | None = None,
    cache: str | None = None,
    sqlite_name: str = "load.sqlite3",
) -> Backends:
    """PostgreSQL and Redis at ``database`` and ``cache`` (this bench's defaults, or its
    LOAD_ settings) when they answer, the database created and the cache emptied; SQLite in
    ``workdir`` and the in-process cache otherwise, each said in the note."""
    if database is None:
        database = os.environ.get("LOAD_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/knowledgeweb_load")
    if cache is None:
        cache = os.environ.get("LOAD_CACHE_URL", "redis://127.0.0.1:6379/14")
    db_parts, cache_parts = urlsplit(database), urlsplit(cache)
    notes = []
    if db_parts.scheme.startswith("postgres") and answers(db_parts.hostname or "", db_parts.port or 5432):
        ensure_database(database)
    else:
        notes.append("PostgreSQL is not answering: SQLite instead (not the production path)")
        database = f"sqlite:///{workdir / sqlite_name}"
    if cache_parts.scheme.startswith("redis") and answers(
        cache_parts.hostname or "", cache_parts.port or 6379
    ):
        import redis

        redis.Redis.from_url(cache).flushdb()
    else:
        notes.append("Redis is not answering: each worker keeps its own cache and its own rate-limit counts")
        cache = "locmem://"
    return Backends(database, cache, "; ".join(notes) or "PostgreSQL and Redis")


def ensure_database(url: str) -> None:
    import psycopg

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            conn.execute(f'CREATE DATABASE "{name}"')


@dataclass
class Fixture:
    threads: list[str]  # one thread per user
    tokens: list[str]
    sessions: list[str]
    search_threads: list[str]
    search_tokens: list[str]


def build_fixture(env: dict[str, str], provider_url: str, deadline: int) -> Fixture:
    """Users, tokens, sessions, threads of cited answers, and a binding to the stalled provider."""
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "knowledgeweb.settings")
    import django

    django.setup()
    import logging

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import User
    from django.contrib.sessions.backends.db import SessionStore
    from django.core.management import call_command

    from knowledgeweb.accounts.services import token_create
    from knowledgeweb.bindings.services import binding_create
    from knowledgeweb.knowledge import RetrievalHit, RetrievalResult, format_result
    from knowledgeweb.threads.services import message_append, thread_create

    # The client's own requests are not worth a line each.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    call_command("migrate", verbosity=0, interactive=False)
    User.objects.filter(username__startswith="load-").delete()
    fixture = Fixture([], [], [], [], [])
    users = []
    for n in range(USERS):
        user = User.objects.create_user(f"load-{n}", password=secrets.token_urlsafe(16))
        users.append(user)
        thread = thread_create(owner=user, title=f"Load {n}", agent_name="load")
        for m in range(MESSAGES_PER_THREAD // 2):
            hits = tuple(
                RetrievalHit(text=f"Fact {m}.{h} about the load test, user {n}.", title=f"doc-{h}.md")
                for h in range(5)
            )
            content, artifact = format_result(RetrievalResult(provider="local", query=f"q{m}", hits=hits))
            message_append(
                thread=thread,
                type="tool",
                name="knowledge_search",
                content=content,
                artifact=artifact,
                trusted=True,
            )
            handles = [part.split(")")[0] for part in content.split("(#")[1:3]]
            cited = " and ".join(f"[fact](#user-content-{handle})" for handle in handles)
            message_append(thread=thread, type="ai", content=f"Answer {m}: see {cited}.")
        fixture.threads.append(str(thread.id))
        fixture.tokens.append(token_create(user=user, name="load")[1])
        session = SessionStore()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.create()
        fixture.sessions.append(str(session.session_key))
        search_thread = thread_create(owner=user, title=f"Searches {n}", agent_name="load")
        fixture.search_threads.append(str(search_thread.id))
        fixture.search_tokens.append(token_create(user=user, name="load-search")[1])
    binding_create(
        name=f"stalled-{secrets.token_hex(3)}", provider="lightrag", base_url=provider_url,
        api_key_env=KEY_VARIABLE, tools=["knowledge_search"], users=users, timeout=deadline,
    )  # fmt: skip
    return fixture


def start_server(
    env: dict[str, str], log: Path, command: tuple[str, ...] = ("make", "-s", "serve")
) -> tuple[subprocess.Popen[bytes], str]:
    with log.open("w") as out:
        server = subprocess.Popen(  # noqa: S603 - the project's own command
            list(command),
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    base = f"http://{env['HOST']}:{env['PORT']}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and server.poll() is None:
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return server, base
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    stop(server)
    raise RuntimeError("the server did not start:\n" + log.read_text()[-3000:])


def stop(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)


# -- driving it ----------------------------------------------------------------------------


@dataclass
class Recorder:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[str, dict[int, int]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(int)))
    errors: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, route: str, seconds: float, status: int | None, error: str = "") -> None:
        with self.lock:
            if status is not None:
                self.latencies[route].append(seconds)
                self.statuses[route][status] += 1
            if error:
                self.errors[route].append(error)


Step = Callable[[httpx.Client, int], tuple[str, httpx.Response]]


def worker(base: str, step: Step, expected: set[int], recorder: Recorder, stop_at: float, seed: int) -> None:
    with httpx.Client(base_url=base, timeout=60) as client:
        n = seed
        while time.monotonic() < stop_at:
            started = time.perf_counter()
            try:
                route, response = step(client, n)
            except httpx.HTTPError as exc:
                recorder.record("?", time.perf_counter() - started, None, type(exc).__name__)
                continue
            finally:
                n += 1
            elapsed = time.perf_counter() - started
            problem = "" if response.status_code in expected else f"HTTP {response.status_code}"
            recorder.record(route, elapsed, response.status_code, problem)


def read_page(fixture: Fixture) -> Step:
    def step(client: httpx.Client, n: int) -> tuple[str, httpx.Response]:
        i = n % USERS
        cookies = {"sessionid": fixture.sessions[i]}
        return "GET /threads/<id>/", client.get(f"/threads/{fixture.threads[i]}/", cookies=cookies)

    return step


def read_api(fixture: Fixture) -> Step:
    def step(client: httpx.Client, n: int) -> tuple[str, httpx.Response]:
        i = (n * 7) % USERS
        headers = {"Authorization": f"Bearer {fixture.tokens[i]}"}
        return "GET /api/threads/<id>", client.get(f"/api/threads/{fixture.threads[i]}", headers=headers)

    return step


def append(fixture: Fixture) -> Step:
    def step(client: httpx.Client, n: int) -> tuple[str, httpx.Response]:
        i = n % USERS
        headers = {"Authorization": f"Bearer {fixture.tokens[i]}"}
        body = {"type": "human", "content": f"A follow-up question, number {n}."}
        url = f"/api/threads/{fixture.threads[i]}/messages"
        return "POST /api/threads/<id>/messages", client.post(url, json=body, headers=headers)

    return step


def search(fixture: Fixture, *, answered: bool = False) -> Step:
    """A search; ``answered``: the provider answers, so a 200 without sources is an error."""
    route = "POST /api/knowledge/search" + ("" if answered else " (stalled)")

    def step(client: httpx.Client, n: int) -> tuple[str, httpx.Response]:
        i = n % USERS
        headers = {"Authorization": f"Bearer {fixture.search_tokens[i]}"}
        body = {"tool": "knowledge_search", "query": "anything", "thread_id": fixture.search_threads[i]}
        response = client.post("/api/knowledge/search", json=body, headers=headers)
        if answered and response.status_code == 200 and not _sources(response):
            # A search that comes back without the sources the provider sent failed, whatever its status.
            return route, httpx.Response(599, request=response.request)
        return route, response

    return step


def _sources(response: httpx.Response) -> bool:
    try:
        artifact = response.json().get("artifact") or {}
    except ValueError:
        return False
    return bool(isinstance(artifact, dict) and artifact.get("knowledge_sources"))


def run_phase(base: str, seconds: float, groups: list[tuple[Step, int, set[int]]]) -> tuple[Recorder, float]:
    """Run every group's workers together for ``seconds``; each worker is a closed loop."""
    recorder = Recorder()
    stop_at = time.monotonic() + seconds
    threads = [
        threading.Thread(target=worker, args=(base, step, expected, recorder, stop_at, k * 1000), daemon=True)
        for step, count, expected in groups
        for k in range(count)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return recorder, seconds


def merge(into: Recorder, other: Recorder) -> None:
    for route, values in other.latencies.items():
        into.latencies[route].extend(values)
    for route, counts in other.statuses.items():
        for status, count in counts.items():
            into.statuses[route][status] += count
    for route, problems in other.errors.items():
        into.errors[route].extend(problems)


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def report(name: str, recorder: Recorder, seconds: float, rows: list[str] | None = None) -> None:
    """Print a phase's table; ``rows`` collects its Markdown rows for the docs."""
    print(f"\n{name}")
    print(f"  {'route':36} {'requests':>8} {'req/s':>7} {'p50 ms':>8} {'p99 ms':>8}  statuses / errors")
    for route in sorted(recorder.latencies):
        values = recorder.latencies[route]
        statuses = ", ".join(f"{code}x{count}" for code, count in sorted(recorder.statuses[route].items()))
        errors = len(recorder.errors.get(route, []))
        p50, p99 = percentile(values, 0.5) * 1000, percentile(values, 0.99) * 1000
        print(
            f"  {route:36} {len(values):8d} {len(values) / seconds:7.1f} {p50:8.1f} "
            f"{p99:8.1f}  {statuses}; errors: {errors}"
        )
    if rows is not None:
        rows.extend(table_rows(name, recorder, seconds))
    for route, problems in recorder.errors.items():
        if route not in recorder.latencies:
            print(f"  {route:36} transport errors: {len(problems)} ({', '.join(sorted(set(problems)))})")


def table_rows(name: str, recorder: Recorder, seconds: float) -> list[str]:
    """A phase's Markdown rows for the docs: per route, requests, rate, p50, p99 and errors."""
    rows = []
    for route in sorted(recorder.latencies):
        values = recorder.latencies[route]
        p50, p99 = percentile(values, 0.5) * 1000, percentile(values, 0.99) * 1000
        rows.append(
            f"| {name.split(':')[0]} | `{route}` | {len(values)} | {len(values) / seconds:.1f} | "
            f"{p50:.1f} | {p99:.1f} | {len(recorder.errors.get(route, []))} |"
        )
    return rows


def page_p99(recorder: Recorder) -> float:
    values = recorder.latencies.get("GET /threads/<id>/", [])
    if not values:
        raise RuntimeError("no page read was measured")
    return percentile(values, 0.99)


def main() -> int:
    seconds = float(os.environ.get("LOAD_SECONDS", "30"))
    rounds = int(os.environ.get("LOAD_ROUNDS", "3"))
    # One reader thread per reader user: fewer would leave the server idle threads whatever
    # the searches hold, and the stalled phase could not slow them.
    readers = int(os.environ.get("LOAD_READERS", str(USERS)))
    deadline = int(os.environ.get("LOAD_DEADLINE", "2"))
    workdir = Path(tempfile.mkdtemp(prefix="kw-load-"))
    backends = choose_backends(workdir)
    provider, provider_url = start_stalled_provider()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "CACHE_URL", "DEBUG"))},
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        "HOST": "127.0.0.1",
        "PORT": str(free_port()),
        "DATABASE_URL": backends.database_url,
        "CACHE_URL": backends.cache_url,
        "STATIC_ROOT": str(workdir / "static"),
        # Plain HTTP on loopback: the trial setting, printed below.
        "SECURE_COOKIES": "0",
        "LOG_LEVEL": "WARNING",
        KEY_VARIABLE: "load-test-key",
    }
    from knowledgeweb.ops.serving import server_settings

    sizing = server_settings(env)
    stalled = max(1, sizing.capacity // 2)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"backends: {backends.note}")
    print(
        f"server: make serve, {sizing.workers} workers x {sizing.threads} threads = capacity {sizing.capacity}; "
        f"worker timeout {sizing.timeout} s"
    )
    print(
        "rate limits: "
        + ", ".join(
            f"{name}={env.get(var, default)}"
            for name, var, default in [
                ("search", "RATE_LIMIT_SEARCH", "60/minute"),
                ("token failures", "RATE_LIMIT_TOKEN_FAILURES", "20/minute"),
                ("login failures", "RATE_LIMIT_LOGIN_FAILURES", "10/minute"),
            ]
        )
        + f" — {USERS} users, one search token each"
    )
    print("cookies: SECURE_COOKIES=0 (plain HTTP on loopback), HttpOnly, SameSite=Lax")
    print(
        f"load: {readers} reader threads (pages and API, {USERS} users), stalled searches = {stalled} "
        f"(half the capacity; the provider never answers, deadline {deadline} s), answered searches "
        f"after {PROVIDER_DELAY * 1000:.0f} ms in the mixed phase, {seconds:g} s per phase"
    )
    try:
        fixture = build_fixture({"DATABASE_URL": backends.database_url, "CACHE_URL": backends.cache_url,
                                 "SECRET_KEY": env["SECRET_KEY"], KEY_VARIABLE: "load-test-key"}, provider_url, deadline)  # fmt: skip
        from bench.review import build_review_fixture

        review_fixture = build_review_fixture(
            int(os.environ.get("REVIEW_REVIEWERS", "20")), int(os.environ.get("REVIEW_THREADS", "400"))
        )
        server, base = start_server(env, workdir / "serve.log")
    except Exception as exc:
        print(f"could not measure: {exc}")
        provider.shutdown()
        return 1
    try:
        pages, api = read_page(fixture), read_api(fixture)
        readers_group = [(pages, readers - readers // 2, {200}), (api, readers // 2, {200})]
        # Warm the server (first renders, connections) before measuring anything.
        run_phase(base, 3, readers_group)
        # Idle and stalled take turns, round after round, so a burst of outside load on
        # this shared machine cannot land on one side only.
        idle, stalled_phase = Recorder(), Recorder()
        ratios = []
        for _ in range(rounds):
            idle_round = run_phase(base, seconds / rounds, readers_group)[0]
            _Stall.stalled = True
            stalled_round = run_stalled(base, seconds / rounds, readers_group, fixture, stalled, deadline)[0]
            _Stall.stalled = False
            ratios.append(page_p99(stalled_round) / page_p99(idle_round))
            merge(idle, idle_round)
            merge(stalled_phase, stalled_round)
        rows: list[str] = []
        report(f"1. idle: readers only ({rounds} rounds)", idle, seconds, rows)
        report(
            f"2. stalled: the same readers with {stalled} searches held by the provider",
            stalled_phase,
            seconds,
            rows,
        )
        mixed_groups = [
            *readers_group,
            (append(fixture), 2, {201}),
            (search(fixture, answered=True), 2, {200}),
        ]
        mixed, mixed_seconds = run_phase(base, seconds, mixed_groups)
        report("3. mixed: readers, 2 appenders, 2 answered searches", mixed, mixed_seconds, rows)
        from bench.review import report_reviewers, run_reviewers

        print("\n4. reviewers: one review queue, overlap 1")
        reviewing = run_reviewers(base, review_fixture, seconds)
        report_reviewers(reviewing, verdicts=False)
        rows.extend(table_rows("4. reviewers", reviewing.recorder, reviewing.seconds))
        idle_p99, loaded_p99 = page_p99(idle), page_p99(stalled_phase)
        ratio = statistics.median(ratios)
        print(
            f"\npage reads p99: idle {idle_p99 * 1000:.1f} ms, with half the capacity stalled "
            f"{loaded_p99 * 1000:.1f} ms; per round " + ", ".join(f"{r:.2f}" for r in ratios)
        )
        met = verdict("load: page p99 with half the capacity stalled / idle, median of rounds", ratio, 1.5)
        total_errors = sum(
            len(v)
            for phase in (idle, stalled_phase, mixed, reviewing.recorder)
            for v in phase.errors.values()
        )
        print(
            f"errors (unexpected statuses, transport errors, answered searches without sources): {total_errors}"
        )
        heading = (
            f"{readers} readers over {USERS} users, {sizing.workers} workers x {sizing.threads} threads, "
            f"{stalled} stalled searches, {seconds:g} s per phase, {backends.note}"
        )
        write_load_docs(rows, heading, ratios, ratio, met, total_errors)
    except RuntimeError as exc:
        print(f"could not measure: {exc}")
        return 1
    finally:
        stop(server)
        provider.shutdown()
    return 0 if met else MISSED_EXIT


def write_load_docs(
    rows: list[str], heading: str, ratios: list[float], ratio: float, met: bool, errors: int
) -> None:
    """The load test's section of docs/performance.md (between bench/run.py's markers), with
    the commit and the load average; LOAD_DOCS names another file, ``-`` none."""
    target = os.environ.get("LOAD_DOCS", str(ROOT / "docs" / "performance.md"))
    if target == "-":
        return
    path = Path(target)
    commit = subprocess.run(  # noqa: S603 - fixed git arguments
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],  # noqa: S607 - git from PATH
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    load = " / ".join(f"{value:.1f}" for value in os.getloadavg())
    section = "\n".join(
        [
            LOAD_SECTION_START,
            "## Load test",
            "",
            f"Written by `make loadtest` (`bench/load.py`) at commit `{commit or 'unknown'}` on "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, load average "
            f"{load} after: {heading}.",
            "",
            "| phase | route | requests | req/s | p50 ms | p99 ms | errors |",
            "|---|---|---|---|---|---|---|",
            *rows,
            "",
            f"Page p99 with half the capacity stalled / idle, per round: {', '.join(f'{r:.2f}' for r in ratios)}; "
            f"median {ratio:.2f}, target <= 1.5: {'met' if met else 'MISSED'}. Errors, all phases: {errors}.",
            LOAD_SECTION_END,
        ]
    )
    text = path.read_text() if path.exists() else ""
    start, end = text.find(LOAD_SECTION_START), text.find(LOAD_SECTION_END)
    if 0 <= start < end:
        text = text[:start] + section + text[end + len(LOAD_SECTION_END) :]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text)


def run_stalled(
    base: str,
    seconds: float,
    readers_group: list[tuple[Step, int, set[int]]],
    fixture: Fixture,
    stalled: int,
    deadline: int,
) -> tuple[Recorder, float]:
    """Searches fill half the capacity first; readers are measured once they are all in flight."""
    searches = Recorder()
    stop_at = time.monotonic() + seconds + 1.0
    holders = [
        threading.Thread(
            target=worker, args=(base, search(fixture), {200}, searches, stop_at, k), daemon=True
        )
        for k in range(stalled)
    ]
    for thread in holders:
        thread.start()
    time.sleep(1.0)
    recorder, measured = run_phase(base, seconds, readers_group)
    for thread in holders:
        thread.join(timeout=deadline + 60)
    merge(recorder, searches)
    return recorder, measured


if __name__ == "__main__":
    sys.exit(main())
