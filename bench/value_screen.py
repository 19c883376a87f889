"""A learned value of a position beside the search's rollouts: fitted, screened,
and written for the core (solver/value_model.json).

A rollout cut at the start of a round could return a value there instead of
playing greedy to the hand's end, if the value told the hand's outcome better
than a greedy playout from the same position; or the value could correct what
the playout reached. This measures both.

Seeded self-play hands, classic, 2 players, the engine at its default budget
on both seats, without the value it fits (hand k from match seed SEED + k).
At the first decision of each round it records the whole state (every card's
place: piles, hands, table, stock) and one greedy playout's margin from it
(_core.CoreState.playout, the greedy policy on both seats); at the hand's
end, the margin the engine's own play reached (seat 0's points less seat
1's), in all and by category. Then, per round, on the hands
with k % 5 != 0 (the others held out), it fits

- `value`: a ridge regression of the margin on the core's value_features
  (each card's place, one-hot; the sweeps, declarations, dealer's points, who
  leads, the last capturer, the cards taken), the value a rollout would stop at;
- `mlp`: a network with one hidden layer of 64 on the same inputs (Adam,
  seeded; its best held-out epoch, a bound in its favour);
- `greedy, rescaled` and `value + greedy`: the playout's margin alone, and
  with the state beside it, fitted linearly (a correction of the rollout
  rather than a replacement);

and prints each one's mean squared error against the held-out hands'
margins, beside the raw playout's (`greedy`) and a constant's. With
`--write` it fits `value + greedy` on every hand, for the margin and for each
category, and writes it to solver/value_model.json, which the core reads at
import (the search's `learned_value`).

    python bench/value_screen.py --hands 20000 --seed 100000 --jobs 2 \
        --data /tmp/value.jsonl.gz --write     # about 35 minutes on 2 cores

`--players 4` does the same with 4-player hands (two sides), on the core's
features for four (eight places: the side piles, the four hands, the table, the
stock), and `--write` fills the model's 4-player section, the 2-player one kept:

    python bench/value_screen.py --players 4 --hands 20000 --seed 300000 --jobs 2 \
        --data /tmp/value4.jsonl.gz --write    # about 40 minutes on 2 cores

`--data` keeps the self-play records (reused if the file exists, so the fits
can be run again without playing). Needs numpy (`pip install -e .[fit]`).
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import gzip
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from cirulla.solver import _core
from cirulla.solver.events import CATEGORIES, HandEnd
from cirulla.solver.match import Match
from cirulla.solver.moves import Move
from cirulla.solver.rules import Rules
from cirulla.solver.search import DEFAULT_BUDGET, Knowledge, Tuning, run_search

MODEL = Path(__file__).resolve().parents[1] / "solver" / "value_model.json"


# the engine as it plays without the value it is fitting (and without match tables: single hands)
UNCORRECTED = Tuning(use_tables=False, knobs={"learned_value": 0})


def hand_records(seed: int, players: int = 2) -> list[dict[str, Any]]:
    """One self-play hand from match seed `seed`: each round's first state, its greedy playout's margin,
    and the hand's margin (side 0's less side 1's)."""
    rules = Rules(players=players, hands=1)
    match = Match(rules, seed=seed, dealer=seed % players)
    out: list[dict[str, Any]] = []
    k = 0
    while not match.is_over and not any(isinstance(e, HandEnd) for e in match.events):
        core = match.core
        if not out or out[-1]["round"] != core.round:
            playout = core.copy()
            playout.playout(seed * 100, True)
            score = playout.score()
            out.append({"seed": seed, "round": core.round, "state": core.export(),
                        "greedy": sum(score[0]) - sum(score[1])})
        moves = core.legal_moves()
        if len(moves) == 1:
            match.play(Move.from_core(moves[0], rules.matta_card))
            continue
        k += 1
        result = run_search(Knowledge.of(match.view(match.to_move)),
                            dataclasses.replace(DEFAULT_BUDGET, seed=seed * 1000 + k), UNCORRECTED)
        match.play(result.best)
    end = next(e for e in match.events if isinstance(e, HandEnd))
    for r in out:
        r["margin"] = end.sides[0].total - end.sides[1].total
        r["categories"] = [getattr(end.sides[0], c) - getattr(end.sides[1], c) for c in CATEGORIES]
    return out


def self_play(hands: int, seed: int, jobs: int, players: int) -> list[dict[str, Any]]:
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return [r for recs in pool.map(functools.partial(hand_records, players=players), range(seed, seed + hands),
                                       chunksize=4) for r in recs]


def features(st: dict[str, Any]) -> np.ndarray:
    """The core's value_features of a recorded state: every card's place (the side piles, each
    seat's hand, the table, the stock), and what the places do not say."""
    return np.array(_core.CoreState.restore(Rules(players=players_of(st), hands=1).core, st).value_features())


def players_of(st: dict[str, Any]) -> int:
    """A recorded state's players: at a round's first decision every seat holds cards."""
    return 4 if st["hand"][2] or st["hand"][3] else 2


def ridge(x: np.ndarray, y: np.ndarray, lam: float = 3.0) -> np.ndarray:
    return np.linalg.solve(x.T @ x + lam * np.eye(x.shape[1]), x.T @ y)


def mlp_mse(x: np.ndarray, y: np.ndarray, xt: np.ndarray, yt: np.ndarray, seed: int,
            hidden: int = 64, epochs: int = 40, lr: float = 1e-3, decay: float = 1e-4) -> float:
    """One hidden ReLU layer, Adam on the squared error; the best held-out error over the epochs."""
    rng = np.random.default_rng(seed)
    p = [rng.normal(0, x.shape[1] ** -0.5, (x.shape[1], hidden)), np.zeros(hidden),
         rng.normal(0, hidden ** -0.5, hidden), np.array([y.mean()])]
    m1 = [np.zeros_like(a) for a in p]
    m2 = [np.zeros_like(a) for a in p]
    t, best = 0, float("inf")
    for _ in range(epochs):
        order = rng.permutation(len(x))
        for k in range(0, len(x), 128):
            b = order[k:k + 128]
            h = x[b] @ p[0] + p[1]
            a = np.maximum(h, 0)
            e = (a @ p[2] + p[3][0] - y[b]) / len(b)
            back = np.outer(e, p[2]) * (h > 0)
            grads = [x[b].T @ back + decay * p[0], back.sum(0), a.T @ e + decay * p[2], np.array([e.sum()])]
            t += 1
            for i, g in enumerate(grads):
                m1[i] = 0.9 * m1[i] + 0.1 * g
                m2[i] = 0.999 * m2[i] + 0.001 * g * g
                p[i] -= lr * (m1[i] / (1 - 0.9 ** t)) / (np.sqrt(m2[i] / (1 - 0.999 ** t)) + 1e-8)
        pred = np.maximum(xt @ p[0] + p[1], 0) @ p[2] + p[3][0]
        best = min(best, float(np.mean((yt - pred) ** 2)))
    return best


def screen(recs: list[dict[str, Any]], seed: int) -> None:
    print("round  states  constant  greedy  greedy,rescaled  value  mlp  value+greedy   (mean squared error, "
          "points squared, held out)")
    for rnd in sorted({r["round"] for r in recs}):
        rs = [r for r in recs if r["round"] == rnd]
        x = np.array([features(r["state"]) for r in rs])
        y = np.array([r["margin"] for r in rs], dtype=float)
        g = np.array([r["greedy"] for r in rs], dtype=float)
        test = np.array([r["seed"] for r in rs]) % 5 == 0
        fit = ~test
        xg = np.c_[x, g]
        line = np.polyfit(g[fit], y[fit], 1)
        preds = (np.full(test.sum(), y[fit].mean()), g[test], np.polyval(line, g[test]),
                 x[test] @ ridge(x[fit], y[fit]))
        row = [float(np.mean((y[test] - p) ** 2)) for p in preds]
        row.append(mlp_mse(x[fit], y[fit], x[test], y[test], seed + rnd))
        row.append(float(np.mean((y[test] - xg[test] @ ridge(xg[fit], y[fit])) ** 2)))
        print(f"{rnd:5d}  {len(rs):6d}  " + "  ".join(f"{v:.2f}" for v in row), flush=True)


def write(recs: list[dict[str, Any]], command: str) -> None:
    """The rounds' corrections, fitted on every hand, into value_model.json's section for the hands'
    player count (the rounds after the first: a rollout is corrected at the first round after its
    root's), the other sections kept: the margin's, and each category's on the same inputs (a ridge
    fit is linear in its target, so the categories' add up to the margin's; the search reports a
    move's points by category, which add up to its expected points)."""
    rounds: dict[str, list[float]] = {}
    categories: dict[str, list[list[float]]] = {}
    for rnd in sorted({r["round"] for r in recs} - {0}):
        rs = [r for r in recs if r["round"] == rnd]
        x = np.c_[np.array([features(r["state"]) for r in rs]), [r["greedy"] for r in rs]]
        targets = np.c_[[r["margin"] for r in rs], [r["categories"] for r in rs]].astype(float)
        fitted = ridge(x, targets)
        rounds[str(rnd)] = [round(float(w), 6) for w in fitted[:, 0]]
        categories[str(rnd)] = [[round(float(w), 6) for w in fitted[:, 1 + c]] for c in range(len(CATEGORIES))]
    seeds = sorted({r["seed"] for r in recs})
    model = json.loads(MODEL.read_text()) if MODEL.exists() else {}
    sections = dict(model.get("players", {}))
    sections[str(players_of(recs[0]["state"]))] = {"fitted_by": command, "hands": len(seeds),
                                                   "match_seeds": f"{seeds[0]}..{seeds[-1]}",
                                                   "rounds": rounds, "categories": categories}
    MODEL.write_text(model_text(dict(sorted(sections.items()))))
    print(f"wrote {MODEL}")


def model_text(sections: dict[str, dict[str, Any]]) -> str:
    """value_model.json: what it holds, then each player count's weights, a round's row to a line."""
    head = {"about": "by player count (2, or 4 in two sides) and round, the weights of the core's value_features "
                     "(each card's place, then the extras) and then of the greedy playout's margin: side 0's "
                     "margin is their dot product; per round and category (the core's order), the same for "
                     "side 0's margin in that category",
            "categories_order": list(CATEGORIES)}
    parts = []
    for players, s in sections.items():
        info = {k: s[k] for k in ("fitted_by", "hands", "match_seeds")}
        rows = ",\n".join(f"    {json.dumps(k)}: {json.dumps(w)}" for k, w in s["rounds"].items())
        cats = ",\n".join(f"    {json.dumps(k)}: [\n     " + ",\n     ".join(json.dumps(w) for w in ws) + "]"
                          for k, ws in s["categories"].items())
        parts.append(f"  {json.dumps(players)}: {{\n" + "".join(f"   {json.dumps(k)}: {json.dumps(v)},\n"
                                                                for k, v in info.items())
                     + '   "rounds": {\n' + rows + '\n   },\n   "categories": {\n' + cats + "\n   }\n  }")
    return json.dumps(head, indent=1)[:-2] + ',\n "players": {\n' + ",\n".join(parts) + "\n }\n}\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hands", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=100000, help="hand k is played from match seed SEED + k")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--players", type=int, choices=(2, 4), default=2,
                    help="4: 4-player hands (two sides), with a model of their own")
    ap.add_argument("--write", action="store_true", help=f"fit the correction (value and playout together) on "
                    f"every hand and write it to {MODEL.relative_to(MODEL.parents[1])}")
    ap.add_argument("--data", help="the self-play records (gzipped JSON lines): read if the file exists, "
                                   "else written")
    args = ap.parse_args(argv)
    if args.data and os.path.exists(args.data):
        with gzip.open(args.data, "rt") as f:
            recs = [json.loads(line) for line in f]
        if recs and players_of(recs[0]["state"]) != args.players:
            ap.error(f"--data {args.data}: its hands are {players_of(recs[0]['state'])}-player ones, "
                     f"not --players {args.players}")
    else:
        recs = self_play(args.hands, args.seed, args.jobs, args.players)
        if args.data:
            with open(args.data, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
                f.write("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in recs).encode())
    print(f"{len({r['seed'] for r in recs})} hands, {len(recs)} states")
    screen(recs, args.seed)
    if args.write:
        write(recs, " ".join(["python bench/value_screen.py", *(argv if argv is not None else sys.argv[1:])]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
