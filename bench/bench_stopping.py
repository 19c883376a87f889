"""How the stopping rule trades CPU for the quality of a hint's move.

Takes first-round positions (2 players, classic: the ISMCTS decisions) from
seeded greedy self-play, values every legal move of each once with a large
reference search (--reference iterations, one seed), then searches each
position with every candidate budget and prints, by candidate, the mean loss
of its move against the reference's best (in points, by the reference's
figures) and its mean iterations and CPU time. A candidate is an arena engine
spec's budget part: ``10000it`` (a fixed cap, no stopping rule) or a stopping
rule ``rule:CAP:g=0.02,se=0.5,first=2000`` (see search.StoppingRule).

    loss_points_per_decision_<candidate>: X points   (mean over the positions)
    iterations_mean_<candidate>: X it
    cpu_ms_mean_<candidate>: X ms
    cpu_ms_p90_<candidate>: X ms

The duplicate arena's margin a hand moves by about the loss a decision times
the 5 or 6 such decisions a side makes in a hand.

Usage: python bench/bench_stopping.py [--positions 200] [--reference 200000] [--seed 1]
           [--cache FILE] CANDIDATE...
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path

from cirulla.solver import Match, Rules
from cirulla.solver.search import Knowledge, SearchBudget, SearchMethod, StoppingRule, Tuning, run_search


def positions(n: int, seed: int) -> list[Knowledge]:
    """First-round decisions (stock above 6, more than one legal move) of
    greedy self-play with some random moves, one in three of them."""
    rng = random.Random(seed)
    out: list[Knowledge] = []
    game = 0
    while len(out) < n:
        match = Match(Rules.preset("classic").replace(hands=1), seed=seed * 1000 + game)
        game += 1
        while not match.is_over and len(out) < n:
            moves = match.legal_moves
            if match.stock_size > 6 and len(moves) > 1 and rng.random() < 1 / 3 and match.phase == "play":
                out.append(Knowledge.of(match.view(match.to_move)))
            match.play(rng.choice(moves) if rng.random() < 0.2 else match.greedy_move())
    return out


def budget_of(text: str, seed: int) -> SearchBudget:
    kind, _, rest = text.partition(":")
    if kind != "rule":
        return SearchBudget(iterations=int(text.removesuffix("it")), seed=seed)
    cap, _, knobs = rest.partition(":")
    names = {"g": "min_gain", "se": "target_stderr", "first": "first_look"}
    rule = {names[k]: (int(v) if k == "first" else float(v))
            for k, v in (item.split("=") for item in filter(None, knobs.split(",")))}
    return SearchBudget(iterations=int(cap.removesuffix("it")), seed=seed, stopping=StoppingRule(**rule))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("candidates", nargs="+")
    p.add_argument("--positions", type=int, default=200)
    p.add_argument("--reference", type=int, default=200_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cache", metavar="FILE", help="the reference's figures: read if the file exists, else written")
    args = p.parse_args()
    knows = positions(args.positions, args.seed)
    tuning = Tuning(method=SearchMethod.ISMCTS, use_tables=False)
    cache = Path(args.cache) if args.cache else None
    refs: list[dict[str, float]] = []
    if cache and cache.exists():
        refs = json.loads(cache.read_text())
        assert len(refs) == len(knows), f"{cache} holds another set of positions"
    else:
        t = time.process_time()
        for i, know in enumerate(knows):
            r = run_search(know, SearchBudget(iterations=args.reference, seed=10**6 + i), tuning)
            refs.append({str(m.move): m.expected_points for m in r.moves})
        print(f"# reference: {args.reference} it, {time.process_time() - t:.0f} s CPU", flush=True)
        if cache:
            cache.write_text(json.dumps(refs))
    for cand in args.candidates:
        losses, its, cpus = [], [], []
        for i, know in enumerate(knows):
            r = run_search(know, budget_of(cand, seed=i), tuning)
            ref = refs[i]
            losses.append(max(ref.values()) - ref[str(r.best)])
            its.append(r.iterations)
            cpus.append(r.cpu_ms)
        print(f"loss_points_per_decision_{cand}: {statistics.mean(losses):.4f} points "
              f"(se {statistics.stdev(losses) / len(losses) ** 0.5:.4f})")
        print(f"iterations_mean_{cand}: {statistics.mean(its):.0f} it")
        print(f"cpu_ms_mean_{cand}: {statistics.mean(cpus):.1f} ms")
        print(f"cpu_ms_p90_{cand}: {statistics.quantiles(cpus, n=10)[-1]:.1f} ms", flush=True)


if __name__ == "__main__":
    main()
