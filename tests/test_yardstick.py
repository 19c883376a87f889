"""The yardstick (bench/yardstick/yardstick.c) plays the core's game.

bench/bench_core.py measures the core's random playouts against this plain C
program; the comparison means something only if the program plays the same
game: the same deal, legal moves (declarations and the matta's namings, the
ace's sweep, captures by equal card, sum and fifteen), dealer's bonus, scope
and end-of-hand scoring. So the mean points of each scoring category, by the
dealer's side and the other, and the mean moves, declarations, scope and void
deals a hand, over 20,000 random hands, must agree with those of the core's
random playouts (_core.random_hand_stats) within sampling error, from
different seeds. And since the program plays the core's random policy move
for move (the same random numbers, the same moves in the same order), the
same seed gives the same hands: the same checksum as _core.bench_playouts and
the same statistics to the last point.
"""
from __future__ import annotations

import importlib.util
import math
import shlex
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from cirulla.solver import _core

BENCH_CORE = Path(__file__).resolve().parents[1] / "bench" / "bench_core.py"
HANDS = 20_000
MAX_Z = 4.5         # 24 statistics: a false alarm about once in 6,000 seed pairs


def load_bench_core() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_core", BENCH_CORE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench_core() -> ModuleType:
    return load_bench_core()


@pytest.fixture(scope="module")
def yardstick(bench_core: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The program, compiled as bench_core.py compiles it (the core's flags)."""
    folder = tmp_path_factory.mktemp("yardstick")
    command = bench_core.yardstick_command(bench_core.YARDSTICK_SOURCE, folder / "yardstick")
    if shutil.which(command[0]) is None:
        pytest.skip(f"no C compiler ({command[0]!r}, Python's sysconfig CC or $CC) to build the yardstick "
                    "(Debian: apt-get install gcc)")
    try:
        exe: Path = bench_core.build_yardstick(folder)
    except subprocess.CalledProcessError as e:
        pytest.fail(f"the yardstick does not compile: {shlex.join(command)}\n{e.stderr}")
    return exe


def classic(bench_core: ModuleType) -> _core.CoreRules:
    rules: _core.CoreRules = bench_core.classic_rules()
    return rules


def test_statistics_agree_within_sampling_error(bench_core: ModuleType, yardstick: Path) -> None:
    _, core = _core.random_hand_stats(classic(bench_core), HANDS, 1)
    yard = bench_core.run_yardstick(yardstick, HANDS, 2, stats=True)
    assert yard.pop("hands") == [HANDS]
    yard.pop("checksum")
    assert len(yard) == 24 and set(yard) <= set(core)
    for name in set(core) - set(yard):                  # re_bello: not in the classic rules
        assert core[name] == (0, 0), name
    far = []
    for name, (ysum, ysq) in yard.items():
        csum, csq = core[name]
        ymean, cmean = ysum / HANDS, csum / HANDS
        var = (ysq / HANDS - ymean ** 2 + csq / HANDS - cmean ** 2) / HANDS
        if var == 0:
            if ymean != cmean:
                far.append(f"{name}: yardstick {ymean}, core {cmean} (no variance)")
            continue
        z = abs(ymean - cmean) / math.sqrt(var)
        if z > MAX_Z:
            far.append(f"{name}: yardstick {ymean:.4f}, core {cmean:.4f}, {z:.1f} standard errors apart")
    assert not far, "the yardstick does not play the core's game:\n" + "\n".join(far)


def test_same_seed_same_hands(bench_core: ModuleType, yardstick: Path) -> None:
    """Move for move the core's random playouts. If the core's random stream
    changes on purpose (the order of its moves, its random numbers: the
    golden totals of tests/test_core_golden.py re-recorded), change the
    program to match, or drop this test and keep the one above."""
    rules = classic(bench_core)
    for seed in (1, 20240607):
        total, core = _core.random_hand_stats(rules, HANDS, seed)
        assert total == _core.bench_playouts(rules, HANDS, seed, False)
        yard = bench_core.run_yardstick(yardstick, HANDS, seed, stats=True)
        assert yard.pop("checksum") == [total]
        yard.pop("hands")
        assert {name: tuple(v) for name, v in yard.items()} == {name: core[name] for name in yard}


def test_random_hand_stats_counts(bench_core: ModuleType) -> None:
    """random_hand_stats's own bookkeeping: 36 cards played a hand, plus one
    move per declaration; the total is the sum of the roles' totals' parts."""
    total, stats = _core.random_hand_stats(classic(bench_core), 2000, 5)
    assert stats["moves"][0] == 36 * 2000 + stats["declarations_made"][0]
    assert stats["dealer.total"][0] + stats["other.total"][0] == sum(
        stats[f"{role}.{cat}"][0] for role in ("dealer", "other")
        for cat in ("scope", "declarations", "cards", "diamonds", "settebello", "primiera", "grande", "piccola"))
    assert total > 0 and _core.random_hand_stats(classic(bench_core), 0, 5) == (0, {k: (0, 0) for k in stats})
