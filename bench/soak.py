"""Soak test of the service: N malformed requests to every RPC (default 100,000),
the generator and judge of tests/test_fuzz.py (tests/fuzz/malformed.py), from
several client threads.

Starts `cirulla-server` in a child process on a free loopback port with the
fuzzing's flags (malformed.SERVER_FLAGS: short searches, 256 KiB messages), or
uses a running one (--server HOST:PORT: no RSS, no SIGTERM then). Prints one
``name: value unit`` line per figure:

    requests: ... requests                        sent, and seed: the run's seed
    status_<RPC>_<CODE>: ... calls                how each RPC was answered
    defects: ... answers                          INTERNAL, UNKNOWN, undocumented codes,
                                                  INVALID_ARGUMENT without named fields,
                                                  unexplained RESOURCE_EXHAUSTED: must be 0
    log_defects: ... lines                        tracebacks and errors in the server's log: must be 0
    rate: ... requests/s                          all RPCs together, wall time
    slowest: ... ms                               the slowest answer (its case and CPU on stderr)
    slowest_cpu: ... ms                           the most CPU the server spent on one request (its case on stderr)
    over_bound: ... requests                      slow (malformed.SLOW_SECONDS of CPU) or not answered within
                                                  the deadline (--timeout): defects, must be 0
    unsent: ... requests                          left out: a request hung the server, the run stopped there
    server_cpu: ... s                             the server's CPU time over the run
    server_rss_before / _after / _peak: ... MiB   the server's resident memory around the run, its peak
    sigterm_exit: ... status, sigterm_seconds: ... s, stopped_within_grace: yes/no

Each defect is written to stderr with its case and request;
`--case I` sends case I of `--seed` alone and prints it and the answer.

A request's CPU is the server's over the call (/proc/<pid>/stat): its own with
--jobs 1; with several client threads, that of every request in flight
meanwhile, so a request beside a slow one may be named slow with it (`--case
I` tells them apart). With --server the CPU is not known: wall times instead.
The exit status is 1 if there is any defect.

Usage: python bench/soak.py [--requests 100000] [--seed 1] [--jobs 4] [--server HOST:PORT] [--case I]
"""
from __future__ import annotations

import argparse
import itertools
import sys
import threading
import time
from pathlib import Path

import grpc

# the generator lives with the tests (tests/fuzz/malformed.py), which import it as fuzz.malformed
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fuzz import malformed  # noqa: E402
from test_server_process import Process  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=4, help="client threads")
    parser.add_argument("--server", help="HOST:PORT of a running server (default: start one)")
    parser.add_argument("--timeout", type=float, default=malformed.DEADLINE_SECONDS,
                        help="seconds a call may take: past them it is a defect")
    parser.add_argument("--case", type=int, help="send this case alone and print it with its answer")
    args = parser.parse_args()

    generator = malformed.Generator(args.seed)
    process = None if args.server else Process(*malformed.SERVER_FLAGS)
    target = args.server or f"127.0.0.1:{process.port}"
    try:
        if args.case is not None:
            case = generator.case(args.case)
            with grpc.insecure_channel(target) as channel:
                outcome = malformed.send(channel, case, args.timeout, server_costs(process))
            problems = malformed.judge(case, outcome)
            print(case.describe(limit=20_000))
            print(f"answer: {outcome.describe()}")
            print("defects: " + ("; ".join(problems) if problems else "none"))
            return 1 if problems else 0
        return soak(args, generator, target, process)
    finally:
        if process is not None:
            process.stop()


def server_costs(process: Process | None) -> malformed.ServerCosts:
    return malformed.ServerCosts(process.proc.pid if process else None)


def soak(args: argparse.Namespace, generator: malformed.Generator, target: str, process: Process | None) -> int:
    tally = malformed.Tally(server_costs(process))
    counter = itertools.count()
    lock = threading.Lock()
    reported = 0

    def work() -> None:
        nonlocal reported
        with grpc.insecure_channel(target) as channel:
            while not tally.stopped and (i := next(counter)) < args.requests:
                case = generator.case(i)
                outcome = malformed.send(channel, case, args.timeout, tally.server)
                if tally.add(case, outcome):
                    with lock:
                        if reported < 20:
                            reported += 1
                            print("DEFECT " + tally.report(tally.defects[-1]), file=sys.stderr, flush=True)

    rss_before = malformed.rss_mib(process.proc.pid) if process else None
    cpu_before = tally.server.cpu_seconds()
    start = time.perf_counter()
    threads = [threading.Thread(target=work, daemon=True) for _ in range(args.jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    cpu_after = tally.server.cpu_seconds()
    rss_after = malformed.rss_mib(process.proc.pid) if process else None

    print(f"requests: {tally.requests} requests")
    print(f"seed: {args.seed} seed")
    for (rpc, code), n in sorted(tally.counts.items()):
        print(f"status_{rpc}_{code}: {n} calls")
    log_defects = malformed.log_defects(process.lines) if process else []
    print(f"defects: {len(tally.defects)} answers")
    print(f"log_defects: {len(log_defects)} lines")
    print(f"rate: {tally.requests / elapsed:.1f} requests/s")
    slowest, costliest = tally.slowest, tally.costliest
    print(f"slowest: {slowest.seconds * 1000 if slowest else 0:.1f} ms")
    if costliest is not None:
        print(f"slowest_cpu: {costliest.cpu_seconds * 1000:.1f} ms")
    print(f"over_bound: {tally.over_bound} requests")
    print(f"unsent: {args.requests - tally.requests} requests")
    print(f"slowest case: {slowest.describe() if slowest else 'none'}", file=sys.stderr)
    if costliest is not None:
        print(f"slowest_cpu case: {costliest.describe()}", file=sys.stderr)
    if tally.stopped:
        print(tally.stopped, file=sys.stderr)
    for line in log_defects[:20]:
        print(f"LOG {line}", file=sys.stderr)
    stopped = True
    if process is not None:
        print(f"server_cpu: {cpu_after - cpu_before:.1f} s")
        print(f"server_rss_before: {rss_before:.1f} MiB")
        print(f"server_rss_after: {rss_after:.1f} MiB")
        print(f"server_rss_peak: {tally.peak_rss_mib:.1f} MiB")
        status, seconds = malformed.sigterm(process.proc)
        stopped = status == 0 and any("cirulla.server: stopped" in line for line in process.lines)
        print(f"sigterm_exit: {status} status")
        print(f"sigterm_seconds: {seconds:.2f} s")
        print(f"stopped_within_grace: {'yes' if stopped else 'no'} (within {malformed.STOP_WITHIN:.0f} s)")
    return 0 if not tally.defects and not log_defects and stopped else 1


if __name__ == "__main__":
    sys.exit(main())
