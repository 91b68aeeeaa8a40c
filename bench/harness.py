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
from dataclasses import dataclass
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


# ---- verdicts ------------------------------------------------------------------------------
#
# Every target a bench checks prints ONE verdict line in this format, and nothing else prints
# "met" or "MISSED"; bench/run.py reads these lines back and ends with one table of them all.
#
#     [verdict] MISSED | 800 messages: warm view / floor | 0.138 | <= 0.05
#
# A bench exits 0 when every target is met, MISSED_EXIT when it measured and missed one, and
# anything else (an exception: 1) when it could not measure.

VERDICT_TAG = "[verdict]"
MISSED_EXIT = 3
_COMPARE: dict[str, Callable[[float, float], bool]] = {
    "<=": lambda measured, target: measured <= target,
    ">=": lambda measured, target: measured >= target,
    "==": lambda measured, target: measured == target,
}


@dataclass(frozen=True)
class Verdict:
    name: str
    measured: str
    target: str
    met: bool

    def line(self) -> str:
        return (
            f"{VERDICT_TAG} {'met' if self.met else 'MISSED'} | {self.name} | {self.measured} | {self.target}"
        )


_verdicts: list[Verdict] = []


def verdict(
    name: str, measured: float, target: float, *, compare: str = "<=", unit: str = "", digits: int = 3
) -> bool:
    """Print the verdict line of one target (lower is better unless ``compare`` says otherwise)."""
    if "|" in name:
        raise ValueError(f"a verdict's name may not hold '|': {name!r}")
    met = _COMPARE[compare](measured, target)
    shown = f"{measured:.{digits}f}{unit}" if isinstance(measured, float) else f"{measured}{unit}"
    result = Verdict(name=name, measured=shown, target=f"{compare} {target:g}{unit}", met=met)
    _verdicts.append(result)
    print(result.line(), flush=True)
    return met


def finish() -> int:
    """The bench's exit code: 0 when every target printed is met, MISSED_EXIT otherwise."""
    missed = [v for v in _verdicts if not v.met]
    if not _verdicts:
        print("no target was measured")
        return 1
    print(f"{len(_verdicts)} targets: {len(_verdicts) - len(missed)} met, {len(missed)} MISSED")
    return MISSED_EXIT if missed else 0


def parse_verdict(line: str) -> Verdict | None:
    """The verdict a line printed by ``verdict`` holds, or None for any other line."""
    if not line.startswith(VERDICT_TAG + " "):
        return None
    parts = [part.strip() for part in line[len(VERDICT_TAG) + 1 :].split("|")]
    if len(parts) != 4 or parts[0] not in {"met", "MISSED"}:
        return None
    status, name, measured, target = parts
    return Verdict(name=name, measured=measured, target=target, met=status == "met")


def info(label: str, value: float, *, unit: str = "", digits: int = 3) -> None:
    """A figure printed for information: it has no target and no verdict."""
    print(f"  {label:<58} {value:10.{digits}f}{unit}   (information, no target)")


def show_ratio(label: str, value: float, target: float) -> bool:
    """Print a ratio's verdict against its target (lower is better) and say whether it is met."""
    return verdict(label, value, target)


def show_count(label: str, value: int, expected: int) -> bool:
    return verdict(label, value, expected, compare="==")
