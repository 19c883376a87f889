"""Benchmark of the service saturated: 16 clients against the default limits.

Starts `cirulla-server` (default flags: a search slot per core, a call waits
at most 200 ms for one with at most 32 waiting, if the line clears in time) in a child process on a free
loopback port and runs tests/test_load.py's load for a warm-up and then
`--seconds`: 16 client threads, each on its own channel, calling 70% GetHint
(a time budget of 20, 30 or 50 ms), 15% ChooseMove (beginner or casual), 15%
ListLegalMoves, a refused call retried after its RetryInfo delay (at most
100 ms); health checked every 50 ms, the server's RSS (VmRSS) read every
0.5 s. Prints one ``name: value unit`` line per figure, of the calls started
after the warm-up:

    saturation_calls_rate: ... calls/s         answered calls, any status
    saturation_ok_rate: ... calls/s            of them OK
    saturation_status_{CODE}: ... calls        per status (OK, RESOURCE_EXHAUSTED,
                                               and any other: none expected)
    saturation_refused_without_retryinfo: ... calls   (none expected)
    saturation_ok_p50 / _p99: ... ms           latency of OK calls, client-side
    saturation_gethint_ok_p50 / _p99: ... ms   the same, GetHint alone
    saturation_refused_p50: ... ms             how long a refusal takes (its slot wait)
    saturation_health_max / _p99: ... ms       a health check's answer
    saturation_health_not_serving: ... checks  not SERVING or failed (none expected)
    saturation_rss_after_warmup / _end: ... MiB
    saturation_rss_ratio: ... ratio            end / after the warm-up

The machine may be shared, which makes the figures noisy: run it when it is
quiet (`cat /proc/loadavg`).

Usage: python bench/bench_saturation.py [--seconds 30] [--warmup 5] [--clients 16]
"""
from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_load import CLIENTS, percentile, saturate  # noqa: E402  (the test's load, from tests/)
from test_server_process import Process  # noqa: E402


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="measured wall time (default 30)")
    parser.add_argument("--warmup", type=float, default=5.0, help="load before the measurement (default 5)")
    parser.add_argument("--clients", type=int, default=CLIENTS, help=f"client threads (default {CLIENTS})")
    args = parser.parse_args()
    print(f"# cores: {os.cpu_count()}, {args.clients} clients, {args.warmup:g} s warm-up, {args.seconds:g} s "
          f"measured, load average {loadavg()}", flush=True)
    server = Process()
    try:
        report = saturate(server.port, server.proc.pid, seconds=args.seconds, warmup=args.warmup,
                          clients=args.clients)
    finally:
        server.proc.send_signal(signal.SIGTERM)
        status = server.proc.wait(30)
        server.stop()
    calls = report.measured()
    ok = [c for c in calls if c.code == "OK"]
    codes = report.codes(calls)
    print(f"saturation_calls_rate: {len(calls) / args.seconds:.1f} calls/s")
    print(f"saturation_ok_rate: {len(ok) / args.seconds:.1f} calls/s")
    for code in sorted({"OK", "RESOURCE_EXHAUSTED"} | set(codes)):
        print(f"saturation_status_{code}: {codes[code]} calls")
    print(f"saturation_refused_without_retryinfo: "
          f"{sum(c.code == 'RESOURCE_EXHAUSTED' and c.retry is None for c in calls)} calls")
    print(f"saturation_ok_p50: {statistics.median(c.ms for c in ok):.1f} ms")
    print(f"saturation_ok_p99: {percentile([c.ms for c in ok], 0.99):.1f} ms")
    hints = [c.ms for c in ok if c.method == "GetHint"]
    print(f"saturation_gethint_ok_p50: {statistics.median(hints):.1f} ms")
    print(f"saturation_gethint_ok_p99: {percentile(hints, 0.99):.1f} ms")
    refused = [c.ms for c in calls if c.code == "RESOURCE_EXHAUSTED"]
    if refused:
        print(f"saturation_refused_p50: {statistics.median(refused):.1f} ms")
    health = [ms for _, ms, _ in report.health]
    print(f"saturation_health_max: {max(health):.1f} ms")
    print(f"saturation_health_p99: {percentile(health, 0.99):.1f} ms")
    print(f"saturation_health_not_serving: {sum(s != 'SERVING' for _, _, s in report.health)} checks")
    print(f"saturation_rss_after_warmup: {report.rss_after_warmup / 1024:.1f} MiB")
    print(f"saturation_rss_end: {report.rss_end / 1024:.1f} MiB")
    print(f"saturation_rss_ratio: {report.rss_ratio:.3f} ratio")
    print(f"# the server exited {status} on SIGTERM; load average at the end {loadavg()}")


if __name__ == "__main__":
    main()
