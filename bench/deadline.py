"""One deadline per search: how long a search against a slow provider really takes.

Real servers on loopback (tests/local_servers.py) send one byte every 50 ms, far
inside any per-read timeout, or answer each RAGFlow request after a fixed delay.
Each case is measured twice in the same run, the two sides taking turns:

- deadline: the project's client (``ProviderSession`` over ``DeadlineTransport``),
            the binding's timeout being one deadline for the whole search;
- per-read: the same adapter with httpx's own per-operation timeout alone (its stock
            transport, the same timeout, no deadline across operations or requests),
            which restarts with every byte received.

The figure is elapsed / budget. A slow provider should cost its deadline:
the target is at most 1.1 (plus 50 ms of scheduling slack) for the deadline side.
The per-read side shows the bug this fixes; its responses are kept short (a few
hundred bytes) so it ends at all.
"""

from __future__ import annotations

import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

if __package__ in {None, ""}:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from bench.harness import finish, verdict
from knowledgeweb.providers import client, lightrag, ragflow
from knowledgeweb.providers.errors import ProviderError
from knowledgeweb.providers.ragflow import DatasetSelection
from tests.local_servers import (
    RagflowServer,
    TrickleServer,
    complete_headers,
    synthetic_dataset,
    trickled_headers,
)

REPEAT = 3
KEY = "bench-provider-key-not-secret"
INTERVAL = 0.05
SLACK = 0.05


@contextmanager
def per_read_timeouts() -> Iterator[None]:
    """httpx's stock transport and no search deadline: only the per-operation timeout is left."""
    transport, deadline = client.DeadlineTransport, client.Deadline
    client.DeadlineTransport = lambda deadline, ssl_context: httpx.HTTPTransport(verify=ssl_context)  # type: ignore[assignment,misc]
    client.Deadline = lambda seconds: deadline(3600)  # type: ignore[assignment,misc]
    try:
        yield
    finally:
        client.DeadlineTransport, client.Deadline = transport, deadline  # type: ignore[misc]


def timed(action: Callable[[], object]) -> tuple[float, str]:
    start = time.perf_counter()
    try:
        action()
        outcome = "answered"
    except ProviderError as exc:
        outcome = exc.code.value
    return time.perf_counter() - start, outcome


def lightrag_case(server: TrickleServer, budget: float) -> Callable[[], object]:
    connection = lightrag.lightrag_connection(base_url=server.url, api_key=KEY, timeout=budget)
    return lambda: lightrag.LightragProvider(connection=connection).search("who founded acme?")


def ragflow_case(server: RagflowServer, budget: float) -> Callable[[], object]:
    connection = ragflow.ragflow_connection(base_url=server.url, api_key=KEY, timeout=budget)
    selection = [DatasetSelection("dsA", tuple(f"d{i:04d}" for i in range(1000)))]
    return lambda: ragflow.RagflowProvider(connection=connection, selection=selection).search("warranty?")


def measure(
    label: str, budget: float, make: Callable[[], tuple[Callable[[], object], Callable[[], None]]]
) -> bool:
    sides: dict[str, list[float]] = {"deadline": [], "per-read": []}
    outcomes: dict[str, str] = {}
    for _ in range(REPEAT):
        for side in sides:
            action, close = make()
            try:
                if side == "per-read":
                    with per_read_timeouts():
                        elapsed, outcome = timed(action)
                else:
                    elapsed, outcome = timed(action)
            finally:
                close()
            sides[side].append(elapsed)
            outcomes[side] = outcome
    print(f"  {label} (budget {budget:g} s)")
    ok = True
    for side, samples in sides.items():
        median = statistics.median(samples)
        print(f"    {side:<9} {median:7.2f} s  elapsed/budget {median / budget:5.2f}  ({outcomes[side]})")
        if side == "deadline":
            # elapsed <= 1.1 x budget + SLACK, as a ratio to the budget
            ok = verdict(
                f"deadline: {label}, budget {budget:g} s: elapsed / budget",
                median / budget,
                round(1.1 + SLACK / budget, 3),
                digits=2,
            )
    return ok


def trickling(**kwargs: object) -> Callable[[float], tuple[Callable[[], object], Callable[[], None]]]:
    def make(budget: float) -> tuple[Callable[[], object], Callable[[], None]]:
        server = TrickleServer(interval=INTERVAL, **kwargs)  # type: ignore[arg-type]
        return lightrag_case(server, budget), server.close

    return make


def ragflow_batches(budget: float) -> tuple[Callable[[], object], Callable[[], None]]:
    # 1 dataset list + 10 document checks (4 at once) + 1 retrieval, 0.3 s each: about 1.5 s in all.
    server = RagflowServer(datasets=[synthetic_dataset("dsA")], delay=0.3)
    return ragflow_case(server, budget), server.close


def concurrency() -> int:
    server = RagflowServer(datasets=[synthetic_dataset("dsA")], delay=0.05)
    try:
        searches = [threading.Thread(target=ragflow_case(server, 30)) for _ in range(3)]
        for thread in searches:
            thread.start()
        for thread in searches:
            thread.join()
        return server.most
    finally:
        server.close()


def transport_cost() -> float:
    """Median cost of one search's session and request, deadline transport / httpx's stock one."""
    server = RagflowServer(datasets=[synthetic_dataset("dsA")])
    connection = client.Connection(label="RAGFlow", base_url=server.url, timeout=10)

    def once() -> None:
        with client.ProviderSession(connection) as session:
            session.get("/api/v1/datasets")

    samples: dict[str, list[float]] = {"deadline": [], "stock": []}
    try:
        for _ in range(200):
            for side, values in samples.items():
                start = time.perf_counter()
                if side == "stock":
                    with per_read_timeouts():
                        once()
                else:
                    once()
                values.append(time.perf_counter() - start)
    finally:
        server.close()
    deadline, stock = statistics.median(samples["deadline"]), statistics.median(samples["stock"])
    print(
        f"  one session + request on loopback: deadline transport {deadline * 1000:.2f} ms, stock {stock * 1000:.2f} ms"
    )
    return deadline / stock


def main() -> int:
    # About 120 bytes at 50 ms a byte: 6 s if read to the end (the per-read side does).
    headers = trickled_headers(60)
    cases = [
        ("LightRAG headers trickling 1 byte / 50 ms", 1.0, trickling(trickle=headers)),
        ("LightRAG headers trickling 1 byte / 50 ms", 2.0, trickling(trickle=headers)),
        (
            "LightRAG body trickling 1 byte / 50 ms",
            1.0,
            trickling(head=complete_headers(120), trickle=b" " * 120),
        ),
        ("LightRAG silent after the request", 1.0, trickling(silent=True)),
        ("RAGFlow 1000-document search, 12 requests of 0.3 s", 1.0, ragflow_batches),
    ]
    print("Elapsed against the binding's timeout (median of 3; the sides take turns):")
    [measure(label, budget, lambda b=budget, m=make: m(b)) for label, budget, make in cases]  # type: ignore[misc]
    verdict("deadline: most requests in flight at one RAGFlow host, 3 concurrent searches", concurrency(), 4)
    verdict("deadline: deadline transport / stock transport, one session and request", transport_cost(), 1.1)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
