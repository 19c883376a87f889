"""Benchmark of deadlines: how close to its deadline a call answers, in every
phase of the search.

Starts `cirulla-server` in child processes on free loopback ports and, for
each phase and each deadline (50, 100, 250 ms), makes N GetHint calls one at
a time (the budget alternating between time_ms=1000 and none, the server's
default of 1000 ms: larger than the deadline either way, so the deadline ends
the search). The phases are tests/test_deadlines.py's: ISMCTS for 2, 3 and 4
players, the exact endgames (2 players, a stock of 6 and of 0), a forced
move, an option set the server has not seen (a new one each call, its tables
built in the background while the call answers, and waited for before the
next call), and a cold server (each call the first to a server just started,
with `--warm-presets ""` and with the default). Prints one
``name: value unit`` line per figure, the time measured by the client from
just before the call to its answer:

    deadline_{phase}_{d}ms_p50 / _p95 / _max: ... ms   elapsed - deadline
                                            (negative: before the deadline)
    deadline_{phase}_{d}ms_kept: ... calls   of N, OK and within +20 ms
    deadline_all_kept / deadline_all_calls: ... calls
    deadline_all_max: ... ms                 the latest answer of them all

The server stops each search at the deadline less its margin
(--deadline-margin-ms, 25 ms), so a quiet machine shows p50 near -22 ms for
the searches that use their whole time (ISMCTS, a cut-short exact solve), and
well before the deadline for those that finish sooner (stock 0, forced). The
machine may be shared, which makes the figures noisy: run it when it is quiet
(`cat /proc/loadavg`).

Usage: python bench/bench_deadlines.py [--calls 30] [--phases ismcts-2p,cold-default,...]
"""
from __future__ import annotations

import argparse
import gc
import itertools
import os
import statistics
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_deadlines import (  # noqa: E402  (the tests' phases and helpers, from tests/)
    BUDGETS,
    DEADLINES_MS,
    PHASES,
    WARM_PRESETS,
    Answer,
    hint_call,
    start_servers,
    stop_all,
    unseen_rules,
    wait_for_tables,
)
from test_server_process import Process  # noqa: E402

from cirulla.solver import Rules  # noqa: E402
from cirulla.v1 import engine_service_pb2 as epb  # noqa: E402
from server_support import choice_position, view_msg  # noqa: E402

COLD_BATCH = 10             # cold servers started at once (each ~45 MB), then measured one by one
ALL_PHASES = [*PHASES, "unseen", "cold-none", "cold-default"]
# a deadline kept: the answer OK by the deadline + 20 ms. (The client enforces the deadline itself, so a late
# answer comes back DEADLINE_EXCEEDED at the deadline; the slack is for the client's own wake-up.)
SLACK_MS = 20.0


def kept(answer: Answer) -> bool:
    return answer.code == "OK" and answer.late_ms <= SLACK_MS


@contextmanager
def quiet_client() -> Iterator[None]:
    """No garbage collection in the client while it measures: a full collection
    of a long session's heap can hold the client for tens of ms between the
    answer's arrival and the clock's reading (the client's delay, not the
    server's)."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def budget(i: int) -> epb.Budget | None:
    return BUDGETS[i % len(BUDGETS)][1]


def search_phase(server: Process, phase: str, deadline: int, n: int) -> list[Answer]:
    view = view_msg(PHASES[phase][0]())
    return [hint_call(server, view, deadline, budget(i), seed=i) for i in range(n)]


def unseen_phase(server: Process, fresh: Iterator[Rules], deadline: int, n: int) -> list[Answer]:
    answers = []
    for i in range(n):
        view = view_msg(choice_position(3, next(fresh)))
        answers.append(hint_call(server, view, deadline, budget(i), seed=i))
        if not wait_for_tables(server, view):
            raise SystemExit("an option set's tables were never built")
    return answers


def cold_phase(warm: str, deadline: int, n: int) -> list[Answer]:
    view = view_msg(choice_position(3))
    answers: list[Answer] = []
    while len(answers) < n:
        processes = start_servers([WARM_PRESETS[warm]] * min(COLD_BATCH, n - len(answers)))
        try:
            for process in processes:
                answers.append(hint_call(process, view, deadline, budget(len(answers)), seed=len(answers)))
        finally:
            stop_all(processes)
    return answers


def measure(phase: str, deadline: int, n: int, server: Process, fresh: Iterator[Rules]) -> list[Answer]:
    if phase in PHASES:
        return search_phase(server, phase, deadline, n)
    if phase == "unseen":
        return unseen_phase(server, fresh, deadline, n)
    return cold_phase("" if phase == "cold-none" else "classic", deadline, n)


def report(name: str, answers: list[Answer]) -> None:
    late = [a.late_ms for a in answers]
    print(f"{name}_p50: {statistics.median(late):+.1f} ms")
    print(f"{name}_p95: {percentile(late, 0.95):+.1f} ms")
    print(f"{name}_max: {max(late):+.1f} ms")
    print(f"{name}_kept: {sum(map(kept, answers))} calls", flush=True)
    codes = {a.code for a in answers} - {"OK"}
    if codes:
        print(f"# {name}: also {', '.join(sorted(codes))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=30, help="calls per phase and deadline (default 30)")
    parser.add_argument("--phases", default=",".join(ALL_PHASES),
                        help=f"comma-separated, of {', '.join(ALL_PHASES)} (default: all)")
    args = parser.parse_args()
    phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    unknown = set(phases) - set(ALL_PHASES)
    if unknown:
        parser.error(f"unknown phase(s): {', '.join(sorted(unknown))}")
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print(f"# cores: {os.cpu_count()}, {args.calls} calls per phase and deadline, load average {load}", flush=True)
    server = Process("--log-level", "INFO")         # the default flags (the classic tables warmed)
    fresh = unseen_rules()
    everything: list[Answer] = []
    try:
        with quiet_client():
            for phase, deadline in itertools.product(phases, DEADLINES_MS):
                answers = measure(phase, deadline, args.calls, server, fresh)
                everything += answers
                report(f"deadline_{phase}_{deadline}ms", answers)
    finally:
        stop_all([server])
    print(f"deadline_all_kept: {sum(map(kept, everything))} calls")
    print(f"deadline_all_calls: {len(everything)} calls")
    print(f"deadline_all_max: {max(a.late_ms for a in everything):+.1f} ms")
    with open("/proc/loadavg") as f:
        print(f"# load average at the end {' '.join(f.read().split()[:3])}; kept: OK within +{SLACK_MS:.0f} ms")


if __name__ == "__main__":
    main()
