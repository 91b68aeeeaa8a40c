"""Thread-safe event counters that make memoization observable to tests and benchmarks."""

from __future__ import annotations

import threading


class Counter:
    """Counts work actually done (a cache miss, a validation run), per process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0

    @property
    def count(self) -> int:
        return self._count

    def increment(self) -> None:
        self.add(1)

    def add(self, amount: int) -> None:
        """Count ``amount`` units of work at once (characters scanned, steps taken)."""
        with self._lock:
            self._count += amount

    def reset(self) -> None:
        with self._lock:
            self._count = 0
