"""The benchmarks' verdicts and `make bench`'s table: a missed target or a bench that could not
measure makes the run fail, and the table shows it as such."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import harness, run
from bench.harness import MISSED_EXIT, Verdict, parse_verdict, verdict
from bench.run import BenchResult, Row, exit_code, rows_of, table

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _own_verdicts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness, "_verdicts", [])


def test_a_verdict_prints_one_line_that_reads_back(capsys: pytest.CaptureFixture[str]) -> None:
    assert verdict("render: warm view / floor", 0.138, 0.05) is False
    assert verdict("huge thread: page size", 1.6, 5.0, unit=" MB", digits=1) is True
    assert verdict("in flight", 4, 4, compare="==") is True
    assert verdict("cache calls per request", 0.0, 1.0, compare=">=", digits=1) is False

    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "[verdict] MISSED | render: warm view / floor | 0.138 | <= 0.05",
        "[verdict] met | huge thread: page size | 1.6 MB | <= 5 MB",
        "[verdict] met | in flight | 4 | == 4",
        "[verdict] MISSED | cache calls per request | 0.0 | >= 1",
    ]
    assert [parse_verdict(line) for line in lines] == [
        Verdict("render: warm view / floor", "0.138", "<= 0.05", met=False),
        Verdict("huge thread: page size", "1.6 MB", "<= 5 MB", met=True),
        Verdict("in flight", "4", "== 4", met=True),
        Verdict("cache calls per request", "0.0", ">= 1", met=False),
    ]


def test_other_lines_are_not_verdicts_and_a_name_may_not_break_the_format() -> None:
    assert parse_verdict("  api / bare    1.2   (information, no target)") is None
    assert parse_verdict("target met") is None
    assert parse_verdict("[verdict] maybe | x | 1 | <= 2") is None
    with pytest.raises(ValueError, match="may not hold"):
        verdict("a | b", 1.0, 2.0)


def test_a_bench_exits_by_its_verdicts(capsys: pytest.CaptureFixture[str]) -> None:
    assert harness.finish() == 1  # nothing measured is not a pass
    verdict("a", 1.0, 2.0)
    assert harness.finish() == 0
    verdict("b", 3.0, 2.0)
    assert harness.finish() == MISSED_EXIT
    assert capsys.readouterr().out.splitlines()[-1] == "2 targets: 1 met, 1 MISSED"


MET = Verdict("fast enough", "1.0", "<= 2", met=True)
MISS = Verdict("too slow", "3.0", "<= 2", met=False)


def test_a_missed_target_fails_the_run_and_shows_in_the_table() -> None:
    rows = rows_of([BenchResult("a.py", 0, (MET,), 1.0), BenchResult("b.py", MISSED_EXIT, (MET, MISS), 1.0)])
    assert [row.outcome for row in rows] == ["met", "met", "MISSED"]
    assert exit_code(rows) == 1
    shown = table(rows)
    assert "| `bench/b.py` | too slow | 3.0 | <= 2 | MISSED |" in shown
    assert shown.endswith("2 met, 1 MISSED, 0 could not measure.\n")
    assert exit_code(rows_of([BenchResult("a.py", 0, (MET,), 1.0)])) == 0


@pytest.mark.parametrize(
    ("result", "outcomes"),
    [
        (BenchResult("crash.py", 1, (), 1.0), ["could not measure (exit 1)"]),
        (BenchResult("silent.py", 0, (), 1.0), ["could not measure (exit 0)"]),
        # Crashed after a verdict: the verdict stands, the rest was not measured.
        (BenchResult("half.py", 1, (MET,), 1.0), ["met", "could not measure (exit 1)"]),
        # Exit codes that disagree with the verdicts are not trusted either way.
        (BenchResult("liar.py", 0, (MISS,), 1.0), ["MISSED", "could not measure (exit 0)"]),
        (BenchResult("odd.py", MISSED_EXIT, (MET,), 1.0), ["met", f"could not measure (exit {MISSED_EXIT})"]),
    ],
)
def test_a_bench_that_could_not_measure_fails_the_run(result: BenchResult, outcomes: list[str]) -> None:
    rows = rows_of([result])
    assert [row.outcome for row in rows] == outcomes
    assert exit_code(rows) == 1


def test_no_rows_is_not_a_pass() -> None:
    assert exit_code([]) == 1
    assert exit_code([Row("bench/a.py", "x", "1", "<= 2", "met")]) == 0


def test_the_runner_runs_real_bench_processes_and_writes_the_stamped_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    prelude = f"import sys\nsys.path.insert(0, {str(ROOT)!r})\nfrom bench.harness import finish, verdict\n"
    (tmp_path / "quick.py").write_text(prelude + "verdict('quick: ratio', 1.0, 1.2)\nsys.exit(finish())\n")
    (tmp_path / "slow.py").write_text(prelude + "verdict('slow: ratio', 1.5, 1.2)\nsys.exit(finish())\n")
    (tmp_path / "broken.py").write_text(prelude + "raise RuntimeError('no server')\n")
    monkeypatch.setattr(run, "HERE", tmp_path)
    monkeypatch.setattr(run, "BENCHMARKS", ("quick.py", "slow.py", "broken.py"))
    docs = tmp_path / "docs" / "performance.md"

    assert run.main(["quick.py"]) == 0
    assert run.main(["--write-docs", str(docs)]) == 1

    written = docs.read_text()
    assert "| `bench/quick.py` | quick: ratio | 1.000 | <= 1.2 | met |" in written
    assert "| `bench/slow.py` | slow: ratio | 1.500 | <= 1.2 | MISSED |" in written
    assert "| `bench/broken.py` | (the whole bench) | - | - | could not measure (exit 1) |" in written
    assert "1 met, 1 MISSED, 1 could not measure." in written
    assert "Measured at commit `" in written
    assert "CPUs; load average (1/5/15 min)" in written
    assert "RuntimeError: no server" in capsys.readouterr().out  # the bench's own output is shown
