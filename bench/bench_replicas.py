"""Benchmark of replicas behind client-side round_robin: hints per second with
1, 2 and 3 `cirulla-server` processes on loopback, at a fixed iteration budget.

Each replica is sized as deploy/k8s/ sizes a pod: one search slot per CPU it
gets, here `--max-concurrent-searches 1` (one CPU each), so that on this
2-core machine one replica leaves a core idle and two use both. The client
(tests/test_replicas.py's load: one channel over every replica, the service
config of examples/service_config.json) keeps two calls in flight per replica.
Prints one ``name: value unit`` line per figure:

    replicas_{n}_hints_per_s: ... hints/s     OK answers per second of wall time
    replicas_{n}_failed: ... calls            anything but OK (none expected)
    replicas_{n}_share_min: ... %             the least-served replica's share of the hints
    replicas_ratio_2v1 / _3v1: ... ratio      against one replica (3 on 2 cores: no more than 2)

The machine may be shared, which makes the figures noisy: run it when it is
quiet (`cat /proc/loadavg`).

Usage: python bench/bench_replicas.py [--seconds 10] [--iterations 20000]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_replicas import balanced_channel, hints, requests, served  # noqa: E402
from test_server_process import Process  # noqa: E402


def measure(n: int, seconds: float, iterations: int) -> tuple[float, int, float]:
    """(hints/s, failed calls, the least share) with n replicas."""
    replicas = [Process("--max-concurrent-searches", "1", "--max-threads", "1") for _ in range(n)]
    try:
        with balanced_channel([p.port for p in replicas]) as channel:
            hints(channel, requests(4 * n, iterations), threads=2 * n)          # warm: connections, caches
            before = [served(p) for p in replicas]
            start = time.perf_counter()
            statuses = hints(channel, requests(1_000_000, iterations), threads=2 * n,
                             until=lambda: time.perf_counter() - start > seconds)
            elapsed = time.perf_counter() - start
        time.sleep(0.2)
        shares = [served(p) - b for p, b in zip(replicas, before, strict=True)]
    finally:
        for p in replicas:
            p.stop()
    failed = sum(k for s, k in statuses.items() if s != "OK")
    return statuses["OK"] / elapsed, failed, 100 * min(shares) / max(sum(shares), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--iterations", type=int, default=20_000)
    args = parser.parse_args()
    print(f"# cores: {os.cpu_count()}, {args.iterations} iterations a hint, {args.seconds:.0f} s per run, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rates = {}
    for n in (1, 2, 3):
        rate, failed, share = measure(n, args.seconds, args.iterations)
        rates[n] = rate
        print(f"replicas_{n}_hints_per_s: {rate:.1f} hints/s")
        print(f"replicas_{n}_failed: {failed} calls")
        print(f"replicas_{n}_share_min: {share:.1f} %")
    print(f"replicas_ratio_2v1: {rates[2] / rates[1]:.2f} ratio")
    print(f"replicas_ratio_3v1: {rates[3] / rates[1]:.2f} ratio")


if __name__ == "__main__":
    main()
