"""Run every benchmark, each in its own process and database, and end with ONE table of every
target: name, measured, target, met / MISSED.

Exits non-zero when any target is missed, and when a bench could not measure (it crashed, or
printed no verdict, or its exit code disagrees with its verdicts): a bench that says nothing
is never counted as met. ``--write-docs PATH`` also writes the table, stamped with the
commit, the date, the CPU count and the load average, into PATH (``make bench-docs``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

if __package__ in {None, ""}:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import MISSED_EXIT, Verdict, parse_verdict

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BENCHMARKS = (
    "render.py",
    "hostile.py",
    "huge_thread.py",
    "retrieval.py",
    "local_index.py",
    "deadline.py",
    "cache_outage.py",
    "compose.py",
    "abstention.py",
    "verdicts.py",
    "review_export.py",
    "review.py",
)
MET, MISSED, UNMEASURED = "met", "MISSED", "could not measure"


@dataclass(frozen=True)
class BenchResult:
    script: str
    returncode: int
    verdicts: tuple[Verdict, ...]
    seconds: float


@dataclass(frozen=True)
class Row:
    bench: str
    name: str
    measured: str
    target: str
    outcome: str


def run_bench(script: str) -> BenchResult:
    """Run one bench, echoing its output, and keep the verdict lines it printed."""
    started = time.perf_counter()
    verdicts: list[Verdict] = []
    with subprocess.Popen(  # noqa: S603 - our own scripts
        [sys.executable, str(HERE / script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            print(line, end="", flush=True)
            found = parse_verdict(line.rstrip("\n"))
            if found is not None:
                verdicts.append(found)
    return BenchResult(script, process.returncode, tuple(verdicts), time.perf_counter() - started)


def rows_of(results: Iterable[BenchResult]) -> list[Row]:
    """One row per verdict, and a "could not measure" row for each bench that did not finish."""
    rows: list[Row] = []
    for result in results:
        bench = f"bench/{result.script}"
        rows += [Row(bench, v.name, v.measured, v.target, MET if v.met else MISSED) for v in result.verdicts]
        missed = any(not v.met for v in result.verdicts)
        finished = bool(result.verdicts) and (
            (result.returncode == 0 and not missed) or (result.returncode == MISSED_EXIT and missed)
        )
        if not finished:
            rows.append(Row(bench, "(the whole bench)", "-", "-", f"{UNMEASURED} (exit {result.returncode})"))
    return rows


def exit_code(rows: Sequence[Row]) -> int:
    """0 only when there are rows and every one is met."""
    return 0 if rows and all(row.outcome == MET for row in rows) else 1


def table(rows: Sequence[Row]) -> str:
    lines = ["| bench | target | measured | target value | verdict |", "|---|---|---|---|---|"]
    lines += [f"| `{r.bench}` | {r.name} | {r.measured} | {r.target} | {r.outcome} |" for r in rows]
    missed = sum(row.outcome == MISSED for row in rows)
    unmeasured = sum(row.outcome.startswith(UNMEASURED) for row in rows)
    met = len(rows) - missed - unmeasured
    return "\n".join(lines) + f"\n\n{met} met, {missed} MISSED, {unmeasured} could not measure.\n"


def _git(*args: str) -> str:
    return subprocess.run(  # noqa: S603 - fixed git arguments
        ["git", *args],  # noqa: S607 - git from PATH, read-only
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    ).stdout.strip()


def stamp(load_before: tuple[float, float, float], load_after: tuple[float, float, float]) -> str:
    commit = _git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = " (with uncommitted changes)" if _git("status", "--porcelain", "--untracked-files=no") else ""
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"Measured at commit `{commit}`{dirty} on {when}, on a machine with {os.cpu_count()} CPUs; "
        f"load average (1/5/15 min) {_load(load_before)} before and {_load(load_after)} after."
    )


def _load(load: tuple[float, float, float]) -> str:
    return " / ".join(f"{value:.1f}" for value in load)


DOCS_HEADER = """# Performance

Written by `make bench-docs` (`bench/run.py --write-docs`): every target of every bench in
`bench/`, as measured by the run stamped below. Do not edit by hand; run it again.

Each bench builds synthetic data in a throwaway database and repeats every measurement
(the two sides of a ratio take turns in each round). Absolute times on a shared machine
mean little, so most targets are ratios of two things measured side by side; a high load
average means the figures were taken under load. A target missed here is open work, and
`make bench` exits non-zero until it is met.
"""


#: The load test's own section of the same file (``bench/load.py`` writes it): kept as it is.
LOAD_SECTION_START = "<!-- load test: written by bench/load.py -->"
LOAD_SECTION_END = "<!-- end of load test -->"


def write_docs(path: Path, rows: Sequence[Row], stamp_line: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    kept = ""
    if path.exists():
        text = path.read_text()
        start, end = text.find(LOAD_SECTION_START), text.find(LOAD_SECTION_END)
        if 0 <= start < end:
            kept = "\n" + text[start : end + len(LOAD_SECTION_END)] + "\n"
    path.write_text(f"{DOCS_HEADER}\n{stamp_line}\n\n{table(rows)}{kept}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--write-docs", type=Path, help="also write the table into this Markdown file")
    parser.add_argument("benches", nargs="*", help=f"only these (default: all of {', '.join(BENCHMARKS)})")
    options = parser.parse_args(argv)
    unknown = sorted(set(options.benches) - set(BENCHMARKS))
    if unknown:
        parser.error(f"no such bench: {', '.join(unknown)}")
    load_before = os.getloadavg()
    results = []
    for script in options.benches or BENCHMARKS:
        print(f"== bench/{script}", flush=True)
        result = run_bench(script)
        print(f"   ({result.seconds:.0f} s, exit {result.returncode})\n", flush=True)
        results.append(result)
    rows = rows_of(results)
    stamp_line = stamp(load_before, os.getloadavg())
    print(f"{stamp_line}\n\n{table(rows)}")
    if options.write_docs:
        write_docs(options.write_docs, rows, stamp_line)
        print(f"written to {options.write_docs}")
    return exit_code(rows)


if __name__ == "__main__":
    sys.exit(main())
