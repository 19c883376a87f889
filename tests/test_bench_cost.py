"""bench/bench_cost.py runs and prints its figures: one hand of 2 players at
an iteration budget (the same hand, moves and iterations on every run), no
saturation. Its timings are not checked, only that they are positive
numbers under the names the issue's targets are read from. ~10 s."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH_COST = Path(__file__).resolve().parents[1] / "bench" / "bench_cost.py"
NUMBER = r"(\d+(?:\.\d+)?)"


def test_bench_cost_prints_the_cost_of_a_decision_by_phase() -> None:
    run = subprocess.run([sys.executable, str(BENCH_COST), "--hands", "1", "--iterations", "200",
                          "--players", "2", "--skip-saturation", "--seed", "1"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    figures = {m[1]: float(m[2]) for m in re.finditer(rf"^(\w+): {NUMBER}\b", run.stdout, re.MULTILINE)}
    for suffix in ("", "_first_rounds", "_last_two_rounds", "_forced"):
        for name in ("cost_ms_mean", "cost_ms_p95", "iterations_mean", "decisions"):
            assert figures[f"{name}_2p_classic{suffix}"] > 0, (name, suffix, run.stdout)
    assert figures["cost_ms_p95_2p_classic"] >= figures["cost_ms_mean_2p_classic_forced"]
    # every card of the hand is played by a decision (36 with 2 players), and the phases split them
    decisions = figures["decisions_2p_classic"]
    assert decisions >= 36
    assert sum(figures[f"decisions_2p_classic_{p}"] for p in ("first_rounds", "last_two_rounds", "forced")) \
        == decisions
    assert figures["hands_2p_classic"] == 1 and figures["seed"] == 1
    assert figures["cpu_over_wall_2p_classic"] > 0
    assert re.search(r"^machine_load: [\d.]+ before, [\d.]+ after .*cores", run.stdout, re.MULTILINE)
    assert "4p_classic" not in run.stdout and "saturation" not in run.stdout


def test_bench_cost_names_the_default_budget_as_it_is() -> None:
    """Without a budget flag the hints run at the default budget, a stopping
    rule under two caps, not a fixed time: --help and the run's first line say so."""
    from cirulla.solver.search import DEFAULT_BUDGET
    run = subprocess.run([sys.executable, str(BENCH_COST), "--help"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    words = " ".join(run.stdout.split())
    assert f"stops once settled, at most {DEFAULT_BUDGET.iterations:,} iterations" in words, words
