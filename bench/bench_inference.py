"""How well the inference reads the other seat's hand: the log-likelihood of
its true hidden cards under the worlds the search draws, for each model of the
other players, against uniform draws. Far cheaper and far less noisy than an
arena run, and paired: every model reads the same positions.

The positions are seat A's decisions in seeded single hands (classic, 2
players) of `--me` against `--opponent` (any arena engine spec), wherever the
opponent still holds hidden cards and has card plays to read (this round's,
or the finished rounds'). At each, every model draws `--samples` worlds; a
card's chance of being in the opponent's hand is its share of them (with half
a count added, so no chance is 0), and a position's score is the Bernoulli
log-likelihood of the true hand over the unseen cards. Printed as
``name: value unit``:

- ``inference_gain_MODEL_vs_OPPONENT``: mean score over uniform draws, nats
  per position, 95% interval (paired over the positions);
- ``inference_program_MODEL_vs_OPPONENT``: at the last two rounds, the
  opponent's mean weight as the greedy program, and how often it reaches
  search.EXACT_PROGRAM (where the search plays those rounds out instead of
  solving them exactly);
- ``inference_positions_vs_OPPONENT``: how many positions were read.

A model is a name and arena knobs over run_search's defaults
(search.searcher_knobs), ``uniform=inf=0`` or ``learned100=imix=1,inf=100``;
``default=`` is the default model.

    python bench/bench_inference.py                         # against ismcts:10000it, ~4 min
    python bench/bench_inference.py --opponent greedy
    python bench/bench_inference.py --models "default=;learned100=imix=1,inf=100" --hands 100
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
from typing import cast

from cirulla.solver.arena import EngineSpec, make_player
from cirulla.solver.errors import CirullaError
from cirulla.solver.match import Match
from cirulla.solver.rules import Rules
from cirulla.solver.search import EXACT_PROGRAM, Knowledge, SearchParams, Tuning, _search, searcher_knobs

DEFAULT_MODELS = "uniform=inf=0;default=;program_only=imix=0,iprog=0.999;no_program=iprog=0;learned100=imix=1,inf=100"


def engine(text: str) -> EngineSpec:
    """An arena engine spec this process can play (argparse's type: a bad one is a usage error)."""
    try:
        spec = EngineSpec.parse(text)
        make_player(spec, 0)                    # refuses what it cannot play here (remote)
    except CirullaError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return spec


def positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"a whole number of at least 1, got {text!r}")
    return int(text)


def positions(me: EngineSpec, opponent: EngineSpec, hands: int, seed: int) -> list[tuple[Knowledge, int]]:
    """(what seat A knows, the opponent's hand) at seat A's decisions with something to read."""
    rules, out = Rules().replace(hands=1), []
    for h in range(hands):
        mine = make_player(me, seed + h)
        theirs = make_player(opponent, seed + h + 1_000_000)
        match, seat = Match(rules, seed=seed + h, dealer=(seed + h) % 2), h % 2
        while not match.is_over:
            view = match.view(match.to_move)
            if match.to_move == seat and view.hidden_count(1 - seat):
                know = Knowledge.of(view)
                if know.plays or know.past:
                    out.append((know, match.core.export()["hand"][1 - seat]))
            match.play((mine if match.to_move == seat else theirs)(match))
    return out


def program_weight(know: Knowledge, knobs: SearchParams) -> float:
    """The opponent's weight as the greedy program (TYPE_PROGRAM, the first kind)."""
    return know.searcher(0, _search.StopFlag(), **knobs).type_weights[1 - know.observer][0]


def score(know: Knowledge, true_hand: int, knobs: SearchParams, samples: int, seed: int) -> float:
    """The log-likelihood of the opponent's true hidden cards under `samples` drawn worlds."""
    other = 1 - know.observer
    known = know.base["hand"][other]
    draw = know.searcher(seed, _search.StopFlag(), **knobs)
    counts = dict.fromkeys(know.unseen, 0)
    for _ in range(samples):
        hand = draw.sample()["hand"][other] & ~known
        for c in know.unseen:
            counts[c] += hand >> c & 1
    total = 0.0
    for c, n in counts.items():
        p = (n + 0.5) / (samples + 1)
        total += math.log(p if true_hand >> c & 1 else 1 - p)
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--opponent", type=engine, default="ismcts:10000it",
                    help="the engine whose hand is read (arena spec)")
    ap.add_argument("--me", type=engine, default="ismcts:1000it", help="the reading seat's engine (arena spec)")
    ap.add_argument("--hands", type=positive, default=150)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--samples", type=positive, default=300, help="worlds drawn per model and position")
    ap.add_argument("--models", default=DEFAULT_MODELS, help="NAME=KNOBS;... (arena knobs; the first is the yardstick)")
    args = ap.parse_args()
    rules = Rules()
    models = {}
    for item in filter(None, args.models.split(";")):
        name, _, knobs = item.partition("=")
        try:
            params = dict(EngineSpec.parse(f"ismcts:1it:{knobs}").params)
        except CirullaError as e:
            ap.error(f"--models: model {name!r}: {e}")
        models[name] = searcher_knobs(rules, Tuning(knobs=cast(SearchParams, params)))
    read = positions(args.me, args.opponent, args.hands, args.seed)
    if not read:
        print("no positions to read", file=sys.stderr)
        return 1
    scores = {name: [score(k, hand, knobs, args.samples, i) for i, (k, hand) in enumerate(read)]
              for name, knobs in models.items()}
    yardstick = next(iter(scores.values()))
    tag = str(args.opponent).replace(":", "_").replace(",", "_").replace("=", "")
    print(f"inference_positions_vs_{tag}: {len(read)} positions")
    for name, s in scores.items():
        gain = [a - b for a, b in zip(s, yardstick, strict=True)]
        half = 1.96 * statistics.stdev(gain) / math.sqrt(len(gain)) if len(gain) > 1 else 0.0
        mean = statistics.mean(gain)
        print(f"inference_gain_{name}_vs_{tag}: {mean:+.4f} nats per position "
              f"(95% CI {mean - half:+.4f} .. {mean + half:+.4f}) over {next(iter(scores))}")
    last_two = [k for k, _ in read if 40 - k.base["stock_pos"] <= 6]
    for name, knobs in models.items():
        if last_two and knobs.get("infer_t"):
            weights = [program_weight(k, knobs) for k in last_two]
            print(f"inference_program_{name}_vs_{tag}: {statistics.mean(weights):.3f} mean at the last two "
                  f"rounds, {100 * sum(w >= EXACT_PROGRAM for w in weights) / len(weights):.1f}% at or above "
                  f"{EXACT_PROGRAM} ({len(weights)} positions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
