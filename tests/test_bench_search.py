"""bench/bench_search.py --exact-only runs and prints the exact solver's
figures under the names the issue's target is read from: the positions of
its 8 endgames and the digest of every figure they give, both as recorded
(a faster solver must print the same digest and the same positions or
fewer; its time is not checked). ~5 s."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH_SEARCH = Path(__file__).resolve().parents[1] / "bench" / "bench_search.py"

# the benchmark's 8 endgames as this solver searches them (see tests/test_exact_golden.py)
POSITIONS = 1534921
FIGURES = "a188fae6cf8e9daa"


def test_bench_search_prints_the_exact_solves_positions_and_figures() -> None:
    run = subprocess.run([sys.executable, str(BENCH_SEARCH), "--exact-only"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    figures = dict(re.findall(r"^(\w+): (\S+) ", run.stdout, re.MULTILINE))
    assert float(figures["exact_last_two_rounds_ms_2p_classic"]) > 0, run.stdout
    assert figures["exact_last_two_rounds_worlds_2p_classic"] == "1680"
    assert figures["exact_last_two_rounds_figures_2p_classic"] == FIGURES, "the figures changed"
    assert int(figures["exact_last_two_rounds_positions_2p_classic"]) == POSITIONS
