"""Benchmark of the batch analysis (`cirulla analyze RECORDS --out FILE`) on a
Dask LocalCluster. Prints ``name: value unit`` lines:

    batch_cluster_start_s_<n>w: ... s          starting a LocalCluster of n worker processes
    batch_games_per_min_1w: ... games/min     one-hand games analysed per minute, 1 worker
    batch_games_per_min_2w: ... games/min     the same, 2 workers
    batch_scaling_2w_over_1w: ... x           the ratio (the target: >= 1.8 on 2 cores)

The games are one-hand matches between greedy players from fixed seeds, each
analysed by the task the command submits (`cirulla.cli.batch.analyze_task`)
at a fixed iteration budget; every worker has analysed a small game first
(imports, match-equity tables), so the figures are the steady state, without
the cluster's start.

Usage: python bench/bench_batch.py [--games 16] [--iterations 3000] [--workers 1,2]
"""
from __future__ import annotations

import argparse
import functools
import time

from distributed import Client, as_completed

from cirulla.cli import batch
from cirulla.solver import Rules, record
from cirulla.solver.players import GreedyPlayer, self_play


def games(n: int) -> list[str]:
    return [record.dumps(self_play(Rules(hands=1), [GreedyPlayer(), GreedyPlayer()], seed=1000 + i))
            for i in range(n)]


def per_minute(texts: list[str], workers: int, iterations: int) -> float:
    start = time.perf_counter()
    cluster = batch.local_cluster(workers)
    print(f"batch_cluster_start_s_{workers}w: {time.perf_counter() - start:.1f} s", flush=True)
    try:
        with Client(cluster, set_as_default=False) as client:
            client.run(functools.partial(batch.analyze_task, texts[0], "warm", "warm", 100, 0))
            start = time.perf_counter()
            futures = [client.submit(batch.analyze_task, text, str(i), str(i), iterations, 0, pure=False)
                       for i, text in enumerate(texts)]
            for future in as_completed(futures, loop=client.loop):
                future.result()
            elapsed = time.perf_counter() - start
    finally:
        cluster.close()
    rate = 60.0 * len(texts) / elapsed
    print(f"batch_games_per_min_{workers}w: {rate:.1f} games/min ({len(texts)} games in {elapsed:.1f} s, "
          f"{iterations} it/search)", flush=True)
    return rate


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=16)
    p.add_argument("--iterations", type=int, default=3000)
    p.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    args = p.parse_args()
    texts = games(args.games)
    rates = {w: per_minute(texts, w, args.iterations) for w in map(int, args.workers.split(","))}
    if 1 in rates and 2 in rates:
        print(f"batch_scaling_2w_over_1w: {rates[2] / rates[1]:.2f} x")


if __name__ == "__main__":
    main()
