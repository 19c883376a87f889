"""Benchmark of the wire layer: the CPU time to read a request's SeatView
(every check included: with the hand's history the server replays the hand
through the rules to derive and check every field).

Prints ``name: value unit`` lines:

    view_read_full_us: ... us/view       a full view, as view_to_proto writes it
    view_read_minimal_us: ... us/view    the smallest view: seat, dealer, to move,
                                         hand, table, scores and the plays (and the
                                         deal, where the dealer's buona took the table)

CPU time (time.process_time), the best of --repeat runs over the same views,
so that a shared machine's load matters less. Runs against any build that has
cirulla.server.convert.view_from_proto and view_to_proto, for a side-by-side
comparison with an earlier build (the minimal figure only where it is accepted).

Usage: python bench/bench_views.py [--repeat 5]
"""
from __future__ import annotations

import argparse
import time

from cirulla.server.convert import view_from_proto, view_to_proto
from cirulla.solver import Match, Rules
from cirulla.solver.players import GreedyPlayer
from cirulla.v1 import game_pb2 as pb


def views(matches: int = 20, plies: int = 30) -> list:
    """Every decision of the first `plies` of greedy matches: (full, minimal) messages."""
    greedy, out = GreedyPlayer(), []
    for seed in range(matches):
        match = Match(Rules(), seed=seed)
        for _ in range(plies):
            if match.phase != "play":
                break
            view = match.view(match.to_move)
            full = view_to_proto(view)
            minimal = pb.SeatView(seat=view.seat, dealer=view.dealer, to_move=view.to_move,
                                  hand=full.hand, table=full.table, scores=full.scores,
                                  history=[e for e in full.history if e.HasField("turn") or
                                           (e.HasField("deal") and e.deal.dealer_scope)])
            out.append((full, minimal))
            match.play(greedy.choose(match))
    return out


def cpu_per_view(messages: list, repeat: int) -> float | None:
    best = None
    for _ in range(repeat):
        start = time.process_time()
        try:
            for m in messages:
                view_from_proto(m)
        except Exception:               # noqa: BLE001 - a build that does not take this form
            return None
        spent = (time.process_time() - start) / len(messages)
        best = spent if best is None else min(best, spent)
    return best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    pairs = views()
    for name, messages in (("full", [f for f, _ in pairs]), ("minimal", [m for _, m in pairs])):
        spent = cpu_per_view(messages, args.repeat)
        if spent is None:
            print(f"view_read_{name}_us: not accepted by this build")
        else:
            print(f"view_read_{name}_us: {spent * 1e6:.0f} us/view ({len(messages)} views)")


if __name__ == "__main__":
    main()
