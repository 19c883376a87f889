"""Benchmark of the Cython rules core: whole-hand playouts per second.

Prints one ``name: value unit`` line per figure:

    core_random_playouts_2p_classic: ... hands/s   (_core.bench_playouts, random policy)
    core_greedy_playouts_2p_classic: ... hands/s   (_core.bench_playouts, greedy policy)
    core_random_over_greedy_2p_classic: ... ratio
    python_api_random_playouts_2p_classic: ... hands/s   (a Python loop over CoreState)
    core_over_python_api_random_2p_classic: ... ratio
    yardstick_random_playouts_2p_classic: ... hands/cpu-s   (bench/yardstick/, plain C)
    core_over_yardstick_2p_classic: ... ratio   (target >= 0.9)

and with ``--callgrind`` (where valgrind is installed; slow, off by default):

    yardstick_instructions_per_hand_2p_classic: ... instr/hand
    core_instructions_per_hand_2p_classic: ... instr/hand
    core_over_yardstick_instructions_2p_classic: ... ratio

The first five figures each run for a fixed wall time (``--seconds``) on the
calling thread only; hands/s is hands per second of wall time. The machine
this runs on is shared, so the figures are noisy: each hands/s figure is
followed by the same count per second of the thread's CPU time
(``..._cpu: ... hands/cpu-s``), which does not count the time other processes
had the core. With ``--repeat N`` every figure is measured N times and the
median is printed (``-v`` shows every run).

The yardstick (bench/yardstick/README.md) is a plain C program that plays the
core's random playouts, the same hands move for move, for 2-player classic
rules only. It is compiled into a temporary folder with the compiler and
flags the core is built with (yardstick_command), then it and the core play
the same ``--yardstick-hands`` seeded hands alternately, ``--rounds`` times;
both are timed in CPU seconds (the core by the thread's CPU time, the program
by the CPU time of this process's children, less the median of three runs of
0 hands: its start-up). yardstick_random_playouts_2p_classic is the median of
the program's rates, core_over_yardstick_2p_classic the median over the
rounds of the core's hands per CPU second over the program's (higher is
better). ``--callgrind`` counts the instructions of each playing
``--callgrind-hands`` hands under ``valgrind --tool=callgrind`` (the core's
from the entry to bench_playouts to its return, the program's less a run of
0 hands); core_over_yardstick_instructions_2p_classic is the core's count over
the program's (lower is better).

Usage: python bench/bench_core.py [--seconds 2] [--repeat 1] [-v]
           [--rounds 5] [--yardstick-hands 200000] [--callgrind] [--callgrind-hands 20000]
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from cirulla.solver import _core

CLASSIC_2P = dict(n_players=2, capture_optional=0, ace_on_ace=0, single_match_first=0,
                  decl_mandatory=0, matta=16, piccola_to_seven=0, grande_long=0,
                  buona_stack=0, grande_in_hand=0, capotun=0, re_bello=0, cirullone=0,
                  five_players=0)


def classic_rules() -> _core.CoreRules:
    return _core.CoreRules(**CLASSIC_2P)


def core_rate(rules: _core.CoreRules, greedy: bool, seconds: float) -> tuple[float, float]:
    """Hands per second of _core.bench_playouts over about `seconds` of wall
    time: per wall second and per CPU second of this thread."""
    _core.bench_playouts(rules, 2000, 1, greedy)           # warm up, size a chunk
    chunk = 2000
    t0 = time.perf_counter()
    _core.bench_playouts(rules, chunk, 2, greedy)
    dt = time.perf_counter() - t0
    chunk = max(1000, int(chunk * 0.05 / max(dt, 1e-6)))  # ~50 ms per call
    hands = 0
    seed = 3
    start, cpu_start = time.perf_counter(), time.thread_time()
    deadline = start + seconds
    while True:
        _core.bench_playouts(rules, chunk, seed, greedy)
        hands += chunk
        seed += 1
        now = time.perf_counter()
        if now >= deadline:
            return hands / (now - start), hands / (time.thread_time() - cpu_start)


def python_api_hand(rules: _core.CoreRules, dealer: int, rnd: random.Random) -> list[list[int]]:
    """One whole hand through the Python-level CoreState API, random policy."""
    st = _core.CoreState(rules, dealer)
    st.shuffle(rnd.getrandbits(64))
    while st.phase != _core.PHASE_OVER:
        if st.phase == _core.PHASE_DEAL:
            if st.deal() == _core.DEAL_RESULT_VOID:
                st.shuffle(rnd.getrandbits(64))
        else:
            moves = st.legal_moves()
            st.apply(*rnd.choice(moves))
    return st.score()


def python_api_rate(rules: _core.CoreRules, seconds: float) -> tuple[float, float]:
    rnd = random.Random(12345)
    hands = 0
    start, cpu_start = time.perf_counter(), time.thread_time()
    deadline = start + seconds
    while True:
        for _ in range(50):
            python_api_hand(rules, hands % 2, rnd)
            hands += 1
        now = time.perf_counter()
        if now >= deadline:
            return hands / (now - start), hands / (time.thread_time() - cpu_start)


def measure(name: str, fn: Callable[[], tuple[float, float]], repeat: int, verbose: bool) -> tuple[float, float]:
    """Median (wall, cpu) rates of `repeat` runs of fn."""
    runs = []
    for _ in range(repeat):
        runs.append(fn())
        if verbose:
            print(f"  # {name} run {len(runs)}: {runs[-1][0]:.0f} hands/s, "
                  f"{runs[-1][1]:.0f} hands/cpu-s", file=sys.stderr)
    return (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))


def report(name: str, rates: tuple[float, float]) -> None:
    print(f"{name}: {rates[0]:.0f} hands/s", flush=True)
    print(f"{name}_cpu: {rates[1]:.0f} hands/cpu-s", flush=True)


YARDSTICK_SOURCE = Path(__file__).resolve().parent / "yardstick" / "yardstick.c"


def yardstick_command(source: Path, exe: Path) -> list[str]:
    """The command that compiles the yardstick as the core is compiled: by
    setuptools' build_ext (setup.py), whose compiler and flags are Python's
    sysconfig CC and CFLAGS (for this Python: gcc, -DNDEBUG -g -fwrapv -O3
    -Wall ...), overridden by the CC and extended by the CFLAGS environment
    variables as build_ext does, then setup.py's extra_compile_args (-O3).
    Only CCSHARED (-fPIC, for shared objects) is left out: this is a program,
    position-independent by default where the toolchain builds PIE programs."""
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    cflags = (sysconfig.get_config_var("CFLAGS") or "") + " " + os.environ.get("CFLAGS", "")
    return [*shlex.split(cc), *shlex.split(cflags), "-O3", str(source), "-o", str(exe)]


def build_yardstick(folder: Path) -> Path:
    """Compile bench/yardstick/yardstick.c into folder; the program's path.
    Raises OSError if there is no compiler, CalledProcessError if it fails."""
    exe = folder / "yardstick"
    subprocess.run(yardstick_command(YARDSTICK_SOURCE, exe), check=True, capture_output=True, text=True)
    return exe


def run_yardstick(exe: Path, hands: int, seed: int, stats: bool = False) -> dict[str, list[int]]:
    """One run: its output, {name: numbers} ("hands", "checksum", and with
    stats each statistic's [sum, sum of squares])."""
    args = [str(exe), str(hands), str(seed)] + (["stats"] if stats else [])
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    parsed = {}
    for line in out.splitlines():
        if line and not line.startswith("#"):
            name, *values = line.split()
            parsed[name] = [int(v) for v in values[:2]]
    return parsed


def children_cpu() -> float:
    """CPU seconds (user and system) of this process's finished children."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def yardstick_cpu(exe: Path, hands: int, seed: int) -> tuple[float, int]:
    """CPU seconds of one run of the program (start-up included); its checksum."""
    before = children_cpu()
    checksum = run_yardstick(exe, hands, seed)["checksum"][0]
    return children_cpu() - before, checksum


def core_cpu(rules: _core.CoreRules, hands: int, seed: int) -> tuple[float, int]:
    """CPU seconds of this thread for _core.bench_playouts's random hands; its total."""
    t0 = time.thread_time()
    total = _core.bench_playouts(rules, hands, seed, False)
    return time.thread_time() - t0, total


def yardstick_rates(rules: _core.CoreRules, exe: Path, hands: int, rounds: int,
                    verbose: bool) -> tuple[float, float]:
    """The yardstick's hands per CPU second (median of the rounds) and the
    median over the rounds of the core's rate over the yardstick's, the two
    playing the same seeded hands alternately."""
    startup = statistics.median(yardstick_cpu(exe, 0, 1)[0] for _ in range(3))
    core_cpu(rules, min(hands, 20000), 1)                      # warm up
    yard_rates, ratios = [], []
    for k in range(rounds):
        seed = 1 + k
        core_s, total = core_cpu(rules, hands, seed)
        yard_s, checksum = yardstick_cpu(exe, hands, seed)
        if checksum != total:
            print(f"  # warning: the yardstick's checksum {checksum} is not the core's {total} "
                  f"(seed {seed}): it no longer plays the core's hands move for move", file=sys.stderr)
        yard_s = max(yard_s - startup, 1e-9)
        yard_rates.append(hands / yard_s)
        ratios.append(yard_s / max(core_s, 1e-9))
        if verbose:
            print(f"  # round {k + 1}: core {hands / core_s:.0f}, yardstick {yard_rates[-1]:.0f} hands/cpu-s "
                  f"(start-up {startup * 1e3:.2f} ms), ratio {ratios[-1]:.3f}", file=sys.stderr)
    return statistics.median(yard_rates), statistics.median(ratios)


def callgrind_instructions(command: list[str], folder: Path, toggle: str | None = None) -> int:
    """Instructions the command executes under valgrind --tool=callgrind (only
    those inside the function `toggle`, if given)."""
    out = folder / "callgrind.out"
    args = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
    if toggle:
        args.append(f"--toggle-collect={toggle}")
    subprocess.run(args + command, check=True, capture_output=True)
    for line in out.read_text().splitlines():
        if line.startswith(("totals:", "summary:")):
            return int(line.split()[1])
    raise RuntimeError("no totals in callgrind's output")


CORE_HANDS_SCRIPT = (
    "import sys; from cirulla.solver import _core; sys.path.insert(0, sys.argv[1]); import bench_core; "
    "_core.bench_playouts(bench_core.classic_rules(), int(sys.argv[2]), 1, False)")


def callgrind_per_hand(exe: Path, hands: int, folder: Path) -> tuple[float, float]:
    """Instructions per random hand of the yardstick and of the core, the
    same seeded hands, each less a run of 0 hands."""
    yard = [callgrind_instructions([str(exe), str(n), "1"], folder) for n in (hands, 0)]
    # the core: from the entry to bench_playouts's Python wrapper to its return
    core = [callgrind_instructions([sys.executable, "-c", CORE_HANDS_SCRIPT, str(Path(__file__).parent), str(n)],
                                   folder, toggle="__pyx_pw_*bench_playouts") for n in (hands, 0)]
    return (yard[0] - yard[1]) / hands, (core[0] - core[1]) / hands


def yardstick_figures(rules: _core.CoreRules, args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="yardstick-") as tmp:
        try:
            exe = build_yardstick(Path(tmp))
        except (OSError, subprocess.CalledProcessError) as e:
            print(f"  # no yardstick figures: could not compile {YARDSTICK_SOURCE}: {e}", file=sys.stderr)
            return
        yard, ratio = yardstick_rates(rules, exe, args.yardstick_hands, max(1, args.rounds), args.verbose)
        print(f"yardstick_random_playouts_2p_classic: {yard:.0f} hands/cpu-s", flush=True)
        print(f"core_over_yardstick_2p_classic: {ratio:.3f} ratio", flush=True)
        if not args.callgrind:
            return
        if shutil.which("valgrind") is None:
            print("  # no instruction counts: valgrind is not installed", file=sys.stderr)
            return
        yard_ir, core_ir = callgrind_per_hand(exe, args.callgrind_hands, Path(tmp))
        print(f"yardstick_instructions_per_hand_2p_classic: {yard_ir:.0f} instr/hand", flush=True)
        print(f"core_instructions_per_hand_2p_classic: {core_ir:.0f} instr/hand", flush=True)
        print(f"core_over_yardstick_instructions_2p_classic: {core_ir / yard_ir:.3f} ratio", flush=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="wall time per figure (default 2)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per figure, median printed")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every run to stderr")
    ap.add_argument("--rounds", type=int, default=5, help="rounds of the core against the yardstick (default 5)")
    ap.add_argument("--yardstick-hands", type=int, default=200_000,
                    help="hands each plays a round (default 200000)")
    ap.add_argument("--callgrind", action="store_true", help="also count instructions with valgrind (slow)")
    ap.add_argument("--callgrind-hands", type=int, default=20_000, help="hands counted (default 20000)")
    ap.add_argument("--only-yardstick", action="store_true", help="print only the yardstick's figures")
    args = ap.parse_args(argv)
    rules = classic_rules()
    s, rep, v = args.seconds, max(1, args.repeat), args.verbose

    if not args.only_yardstick:
        rnd = measure("core_random", lambda: core_rate(rules, False, s), rep, v)
        report("core_random_playouts_2p_classic", rnd)
        grd = measure("core_greedy", lambda: core_rate(rules, True, s), rep, v)
        report("core_greedy_playouts_2p_classic", grd)
        print(f"core_random_over_greedy_2p_classic: {rnd[0] / grd[0]:.2f} ratio", flush=True)
        py = measure("python_api_random", lambda: python_api_rate(rules, s), rep, v)
        report("python_api_random_playouts_2p_classic", py)
        print(f"core_over_python_api_random_2p_classic: {rnd[0] / py[0]:.1f} ratio", flush=True)
    yardstick_figures(rules, args)


if __name__ == "__main__":
    main()
