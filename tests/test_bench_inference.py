"""bench/bench_inference.py reads the opponent's hand and prints its figures:
against greedy, the default model reads greedy's hand better than uniform
draws do (greedy is the program the inference knows), and the yardstick's own
gain is zero. Seeded, so the same figures every run. ~10 s."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "bench_inference.py"
NUMBER = r"([-+]\d+\.\d+)"
FIGURE = rf"^inference_gain_(\w+)_vs_greedy: {NUMBER} nats per position \(95% CI {NUMBER} \.\. {NUMBER}\)"


def test_the_default_model_reads_greedys_hand_better_than_uniform_draws() -> None:
    run = subprocess.run([sys.executable, str(BENCH), "--opponent", "greedy", "--me", "greedy", "--hands", "8",
                          "--samples", "100", "--models", "uniform=inf=0;default=;no_program=iprog=0"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    gains = {m[1]: tuple(map(float, m.groups()[1:])) for m in re.finditer(FIGURE, run.stdout, re.MULTILINE)}
    assert set(gains) == {"uniform", "default", "no_program"}, run.stdout
    assert gains["uniform"] == (0.0, 0.0, 0.0)
    assert gains["default"][1] > 0                          # the interval above uniform's
    assert gains["default"][0] > gains["no_program"][0]     # the program kind is what reads greedy
    assert int(re.search(r"^inference_positions_vs_greedy: (\d+) positions", run.stdout, re.MULTILINE)[1]) > 50
    # greedy is read as the program by the last two rounds; uniform draws read no kind
    program = dict(re.findall(r"^inference_program_(\w+)_vs_greedy: (\d\.\d+) mean", run.stdout, re.MULTILINE))
    assert set(program) == {"default", "no_program"} and float(program["default"]) > 0.8
    assert float(program["no_program"]) == 0


def test_the_oracle_reads_a_searching_players_hand_better_than_the_default() -> None:
    # flat Monte Carlo's plays, read by flat Monte Carlo's own search for every holding it could have
    run = subprocess.run([sys.executable, str(BENCH), "--opponent", "flatmc:2000it", "--me", "greedy", "--hands", "8",
                          "--samples", "100", "--oracle", "300", "--oracle-t", "0.25",
                          "--models", "uniform=inf=0;default="], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    figure = FIGURE.replace("_vs_greedy", "_vs_flatmc_2000it")
    gains = {m[1]: tuple(map(float, m.groups()[1:])) for m in re.finditer(figure, run.stdout, re.MULTILINE)}
    assert set(gains) == {"uniform", "default", "oracle"}, run.stdout
    assert gains["oracle"][1] > 0                           # its interval above uniform's
    assert gains["oracle"][0] > gains["default"][0] + 0.1


def test_a_bad_model_names_its_knob() -> None:
    run = subprocess.run([sys.executable, str(BENCH), "--hands", "1", "--models", "odd=clever=1"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 2 and "--models: model 'odd'" in run.stderr and "unknown knob 'clever'" in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("args, named", [(["--opponent", "clever"], "--opponent"),
                                         (["--me", "remote:127.0.0.1:1"], "--me"),
                                         (["--samples", "0"], "--samples"),
                                         (["--opponent", "greedy", "--oracle", "100"], "--oracle"),
                                         (["--oracle", "-1"], "--oracle"),
                                         (["--oracle-t", "0"], "--oracle-t")])
def test_a_bad_engine_or_count_names_its_option(args, named) -> None:
    run = subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=300)
    assert run.returncode == 2 and named in run.stderr and "Traceback" not in run.stderr
