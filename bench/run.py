"""Run every benchmark, each in its own process and database; exit non-zero only if one could not measure."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = (
    "render.py",
    "hostile.py",
    "huge_thread.py",
    "retrieval.py",
    "local_index.py",
    "deadline.py",
    "cache_outage.py",
    "compose.py",
)


def main() -> int:
    failed = []
    for script in BENCHMARKS:
        started = time.perf_counter()
        print(f"== bench/{script}", flush=True)
        result = subprocess.run([sys.executable, str(HERE / script)], check=False)  # noqa: S603 - our own scripts
        print(f"   ({time.perf_counter() - started:.0f} s)\n", flush=True)
        if result.returncode != 0:
            failed.append(script)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],  # noqa: S607 - git from PATH, read-only
        capture_output=True,
        text=True,
        check=False,
        cwd=HERE,
    ).stdout.strip()
    print(f"measured at commit {commit or 'unknown'}")
    if failed:
        print("could not measure: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
