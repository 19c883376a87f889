"""The learned rollout policy's training data: the search's own decisions in
seeded self-play.

Each hand k is one hand of 2-player classic rules from the match seed
``seed + k``, the search (SO-ISMCTS with its exact endgames, ``--iterations``
per move, one thread, seeded) playing both seats. At every decision with two
legal card plays or more (no declaration among the moves: the policy declares
as the greedy one does) it records, for every legal move, the core's policy
features (_core.CoreState.move_features: the very numbers the rollout reads)
and the search's expected points, and which move the search chose and which
the greedy policy would. One JSON object a line, gzipped:

    {"hand": k, "seat": 0, "round": 0, "method": "ismcts", "chosen": 2,
     "greedy": 0, "values": [...], "features": [[...], ...]}

The same arguments give the same file, byte for byte (single-threaded,
seeded searches; ``--jobs`` only spreads the hands over processes).

    python bench/policy/make_data.py --hands 600 --iterations 20000 --seed 1000 \
        --out bench/policy/data.jsonl.gz
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from cirulla.solver import _core
from cirulla.solver.events import HandEnd
from cirulla.solver.match import Match
from cirulla.solver.moves import Move
from cirulla.solver.rules import Rules
from cirulla.solver.search import Knowledge, SearchBudget, Tuning, run_search


def hand_records(seed: int, iterations: int, hand: int) -> list[dict[str, Any]]:
    """The decisions of one self-play hand from match seed `seed`."""
    rules = Rules(hands=1)
    match = Match(rules, seed=seed, dealer=seed % rules.players)
    matta = rules.matta_card
    out: list[dict[str, Any]] = []
    k = 0
    while not match.is_over and not any(isinstance(e, HandEnd) for e in match.events):
        core = match.core
        moves = core.legal_moves()
        seat = match.to_move
        if len(moves) < 2:
            match.play(Move.from_core(moves[0], matta))
            continue
        k += 1
        result = run_search(Knowledge.of(match.view(seat)), SearchBudget(iterations=iterations, seed=seed * 1000 + k),
                            Tuning(use_tables=False))
        legal = [Move.from_core(t, matta) for t in moves]
        if all(t[0] >= 0 for t in moves):
            value = {s.move: s.expected_points for s in result.moves}
            out.append({"hand": hand, "seat": seat, "round": core.round, "method": result.method.value,
                        "chosen": legal.index(result.best), "greedy": core.greedy_choice(moves),
                        "values": [round(value[m], 4) for m in legal],
                        "features": core.move_features(moves)})
        match.play(result.best)
    return out


def _job(args: tuple[int, int, int]) -> list[dict[str, Any]]:
    return hand_records(*args)


def records(hands: int, iterations: int, seed: int, jobs: int = 1) -> Iterator[list[dict[str, Any]]]:
    """Each hand's records, in hand order."""
    tasks = [(seed + k, iterations, k) for k in range(hands)]
    if jobs <= 1:
        yield from map(_job, tasks)
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            yield from pool.map(_job, tasks)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hands", type=int, default=600)
    ap.add_argument("--iterations", type=int, default=20000, help="search iterations per move")
    ap.add_argument("--seed", type=int, default=1000, help="hand k is played from match seed SEED + k")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", default="bench/policy/data.jsonl.gz")
    args = ap.parse_args(argv)
    start = time.monotonic()
    n = 0
    # mtime 0: the same data, the same bytes
    with open(args.out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        header = {"features": list(_core.POLICY_FEATURES), "hands": args.hands,
                  "iterations": args.iterations, "seed": args.seed}
        f.write((json.dumps(header) + "\n").encode())
        for k, recs in enumerate(records(args.hands, args.iterations, args.seed, args.jobs)):
            for r in recs:
                f.write((json.dumps(r, separators=(",", ":")) + "\n").encode())
            n += len(recs)
            if (k + 1) % 25 == 0:
                print(f"{k + 1} hands, {n} decisions, {time.monotonic() - start:.0f} s", file=sys.stderr)
    print(f"wrote {args.out}: {args.hands} hands, {n} decisions, {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
