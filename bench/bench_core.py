"""Benchmark of the Cython rules core: whole-hand playouts per second.

Prints one ``name: value unit`` line per figure:

    core_random_playouts_2p_classic: ... hands/s   (_core.bench_playouts, random policy)
    core_greedy_playouts_2p_classic: ... hands/s   (_core.bench_playouts, greedy policy)
    core_random_over_greedy_2p_classic: ... ratio
    python_api_random_playouts_2p_classic: ... hands/s   (a Python loop over CoreState)
    core_over_python_api_random_2p_classic: ... ratio

Each figure runs for a fixed wall time (``--seconds``) on the calling thread
only; hands/s is hands per second of wall time. The machine this runs on is
shared, so the figures are noisy: each hands/s figure is followed by the same
count per second of the thread's CPU time (``..._cpu: ... hands/cpu-s``), which
does not count the time other processes had the core. With ``--repeat N``
every figure is measured N times and the median is printed (``-v`` shows
every run).

Usage: python bench/bench_core.py [--seconds 2] [--repeat 1] [-v]
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

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


def python_api_hand(rules: _core.CoreRules, dealer: int, rnd: random.Random) -> list:
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


def measure(name: str, fn, repeat: int, verbose: bool) -> tuple[float, float]:
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


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="wall time per figure (default 2)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per figure, median printed")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every run to stderr")
    args = ap.parse_args(argv)
    rules = classic_rules()
    s, rep, v = args.seconds, max(1, args.repeat), args.verbose

    rnd = measure("core_random", lambda: core_rate(rules, False, s), rep, v)
    report("core_random_playouts_2p_classic", rnd)
    grd = measure("core_greedy", lambda: core_rate(rules, True, s), rep, v)
    report("core_greedy_playouts_2p_classic", grd)
    print(f"core_random_over_greedy_2p_classic: {rnd[0] / grd[0]:.2f} ratio", flush=True)
    py = measure("python_api_random", lambda: python_api_rate(rules, s), rep, v)
    report("python_api_random_playouts_2p_classic", py)
    print(f"core_over_python_api_random_2p_classic: {rnd[0] / py[0]:.1f} ratio", flush=True)


if __name__ == "__main__":
    main()
