"""Benchmark of the gRPC service: GetHint latency and throughput under load.

Starts `cirulla-server` in a child process on a free loopback port and runs
1, 2 and 4 client threads in a loop of GetHint calls for a fixed wall time
each. Prints one ``name: value unit`` line per figure:

    gethint_100ms_c{1,2,4}_p50 / _p99: ... ms    a 100 ms time budget per hint
    gethint_100ms_c{1,2,4}_rate: ... hints/s
    gethint_100ms_c{1,2,4}_iterations_rate: ... iterations/s   search work done
    gethint_fixed_c{1,2}_rate: ... hints/s       an iteration budget worth ~100 ms
                                                 of one core (calibrated first)
    server_cpu_*: ... cores                      the server process's CPU time per
                                                 wall second during that load
    throughput_ratio_2v1: ... ratio              gethint_fixed_c2_rate / _c1_rate

With a time budget, a hint takes 100 ms of wall time however many cores do the
work, so hints/s grow with clients even on one core; what shows whether two
requests use two cores is the work: iterations/s at a time budget, and hints/s
at a fixed iteration budget (throughput_ratio_2v1, the target is >= 1.8 on 2
cores). The machine may be shared, which makes the figures noisy.

Usage: python bench/bench_server.py [--seconds 3]
"""
from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cirulla.server import convert
from cirulla.solver import Match, Rules
from cirulla.solver.players import GreedyPlayer
from cirulla.v1 import engine_service_pb2 as epb
from cirulla.v1 import engine_service_pb2_grpc


def positions(n: int = 8) -> list:
    """Views of the seat to move a few plies into a hand: searched by ISMCTS,
    not by the exact endgame solver (the stock is far from empty)."""
    views = []
    for seed in range(100):
        match = Match(Rules(), seed=seed)
        for _ in range(seed % 4):
            match.play(GreedyPlayer().choose(match))
        view = match.view(match.to_move)
        if len(match.legal_moves) >= 3:
            views.append(convert.view_to_proto(view))
        if len(views) == n:
            return views
    return views


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "cirulla.server.app", "--listen", f"127.0.0.1:{port}",
                             "--max-concurrent-searches", "4", "--log-level", "WARNING"])
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    health = health_pb2_grpc.HealthStub(channel)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if health.Check(health_pb2.HealthCheckRequest(), timeout=1).status == \
                    health_pb2.HealthCheckResponse.SERVING:
                return proc
        except grpc.RpcError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the server did not start")


def load(target: str, views: list, budget: epb.Budget, clients: int, seconds: float):
    """Every client calls GetHint in a loop; (latencies in ms, iterations, wall seconds)."""
    latencies: list[float] = []
    iterations = [0]
    lock = threading.Lock()
    start = time.perf_counter()
    stop_at = start + seconds

    def client(k: int) -> None:
        stub = engine_service_pb2_grpc.EngineServiceStub(grpc.insecure_channel(target))
        i = k
        while time.perf_counter() < stop_at:
            t0 = time.perf_counter()
            hint = stub.GetHint(epb.GetHintRequest(view=views[i % len(views)], budget=budget, seed=i)).hint
            ms = (time.perf_counter() - t0) * 1000
            with lock:
                latencies.append(ms)
                iterations[0] += hint.stats.iterations
            i += clients

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, iterations[0], time.perf_counter() - start


def cpu_seconds(pid: int) -> float | None:
    """CPU time a process has used (Linux /proc), or None elsewhere."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="wall time of each load (default 3)")
    args = parser.parse_args()
    views = positions()
    port = free_port()
    server = start_server(port)
    target = f"127.0.0.1:{port}"
    print(f"# cores: {os.cpu_count()}, positions: {len(views)}, {args.seconds:g} s per load", flush=True)
    try:
        time_budget = epb.Budget(time_ms=100)
        load(target, views, time_budget, 1, 1.0)                    # warm up (the equity table)
        for clients in (1, 2, 4):
            cpu0 = cpu_seconds(server.pid)
            lat, its, wall = load(target, views, time_budget, clients, args.seconds)
            if cpu0 is not None:
                print(f"server_cpu_100ms_c{clients}: {(cpu_seconds(server.pid) - cpu0) / wall:.2f} cores")
            print(f"gethint_100ms_c{clients}_p50: {statistics.median(lat):.1f} ms")
            print(f"gethint_100ms_c{clients}_p99: {p(lat, 0.99):.1f} ms")
            print(f"gethint_100ms_c{clients}_rate: {len(lat) / wall:.1f} hints/s")
            print(f"gethint_100ms_c{clients}_iterations_rate: {its / wall:.0f} iterations/s", flush=True)
            if clients == 1:
                per_hint = its / len(lat)                           # one core's work in 100 ms
        fixed = epb.Budget(iterations=max(int(per_hint), 1_000))
        print(f"# fixed budget: {fixed.iterations} iterations per hint")
        rates = {}
        for clients in (1, 2):
            cpu0 = cpu_seconds(server.pid)
            lat, _, wall = load(target, views, fixed, clients, args.seconds)
            if cpu0 is not None:
                print(f"server_cpu_fixed_c{clients}: {(cpu_seconds(server.pid) - cpu0) / wall:.2f} cores")
            rates[clients] = len(lat) / wall
            print(f"gethint_fixed_c{clients}_p50: {statistics.median(lat):.1f} ms")
            print(f"gethint_fixed_c{clients}_rate: {rates[clients]:.1f} hints/s", flush=True)
        print(f"throughput_ratio_2v1: {rates[2] / rates[1]:.2f} ratio")
    finally:
        server.terminate()
        server.wait(30)


if __name__ == "__main__":
    main()
