"""Shared set-up for the benchmarks: a throwaway database, Django, and timing.

Every figure is a median of repeated runs, and every verdict is a ratio of two
things measured side by side in the same process, because absolute times on a
shared machine mean little.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPEAT = 5
ROOT = Path(__file__).resolve().parent.parent


def setup_django() -> None:
    """Configure Django on a fresh SQLite file in a temporary directory, and migrate it."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    workdir = tempfile.mkdtemp(prefix="knowledgeweb-bench-")
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir}/bench.sqlite3"
    os.environ.setdefault("SECRET_KEY", "bench-only-key-not-secret-0123456789abcdefghijklmnopqrstuvwxyz")
    os.environ["DEBUG"] = "0"
    os.environ["ALLOWED_HOSTS"] = "testserver"
    os.environ["LOG_LEVEL"] = "WARNING"
    # Pages name their static files by the manifest that collectstatic writes, as in production.
    os.environ["STATIC_ROOT"] = f"{workdir}/static"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "knowledgeweb.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)


def median_seconds(
    action: Callable[[], object], *, repeat: int = REPEAT, before: Callable[[], object] | None = None
) -> float:
    """Median wall time of ``action`` over ``repeat`` runs; ``before`` runs untimed ahead of each."""
    samples = []
    for _ in range(repeat):
        if before is not None:
            before()
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def interleaved_medians(
    actions: dict[str, Callable[[], object]],
    *,
    repeat: int = REPEAT,
    before: dict[str, Callable[[], object]] | None = None,
) -> dict[str, float]:
    """Median wall time of each action, the actions taking turns in every round.

    Taking turns keeps a burst of load on a shared machine from landing on one
    side of a ratio only.
    """
    samples: dict[str, list[float]] = {name: [] for name in actions}
    for _ in range(repeat):
        for name, action in actions.items():
            if before and name in before:
                before[name]()
            start = time.perf_counter()
            action()
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in samples.items()}


def show_time(label: str, seconds: float, *, repeat: int = REPEAT) -> None:
    print(f"  {label:<58} {seconds * 1000:10.2f} ms (median of {repeat})")


def show_ratio(label: str, value: float, target: float) -> bool:
    """Print a ratio against its target (lower is better) and say whether it is met."""
    verdict = "met" if value <= target else "MISSED"
    print(f"  {label:<58} {value:10.3f}   target <= {target:g}: {verdict}")
    return value <= target


def show_count(label: str, value: int, expected: int) -> bool:
    verdict = "met" if value == expected else "MISSED"
    print(f"  {label:<58} {value:10d}   expected {expected}: {verdict}")
    return value == expected
