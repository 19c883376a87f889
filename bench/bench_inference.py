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

``--oracle N`` adds the model ``oracle``: the opponent read by its own kind
of search (flat Monte Carlo's, or the search's with its default knobs), N
iterations from its own view at each of its card plays this round, for every
holding it could have then; a play's probability is the softmax of those
figures (points) at ``--oracle-t``, and the holdings' weights give each card's
exact chance (where there is no play this round to read, every holding alike).
It tells how much a searching player's plays say of its hand to a model that
plays as it does: far more costly than the search could afford (hundreds of
searches a position), a bound for the cheap models above.

    python bench/bench_inference.py                         # against ismcts:10000it, ~4 min
    python bench/bench_inference.py --opponent greedy
    python bench/bench_inference.py --models "default=;learned100=imix=1,inf=100" --hands 100
    python bench/bench_inference.py --opponent flatmc:10000it --oracle 2000 --models "uniform=inf=0;default="
"""
from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
import statistics
import sys
from collections.abc import Mapping
from typing import cast

from cirulla.solver.arena import EngineSpec, make_player
from cirulla.solver.errors import CirullaError
from cirulla.solver.match import Match
from cirulla.solver.moves import Move
from cirulla.solver.rules import Rules
from cirulla.solver.search import (
    EXACT_PROGRAM,
    Knowledge,
    SearchBudget,
    SearchMethod,
    SearchParams,
    Tuning,
    _search,
    run_search,
    searcher_knobs,
)

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


# the opponent's card play as it saw it: its knowledge then, its hand then, its move
TheirPlay = tuple[Knowledge, int, Move]


def positions(me: EngineSpec, opponent: EngineSpec, hands: int,
              seed: int) -> list[tuple[Knowledge, int, list[TheirPlay]]]:
    """(what seat A knows, the opponent's hand, its card plays this round) at seat A's decisions with
    something to read."""
    rules, out = Rules().replace(hands=1), []
    for h in range(hands):
        mine = make_player(me, seed + h)
        theirs = make_player(opponent, seed + h + 1_000_000)
        match, seat = Match(rules, seed=seed + h, dealer=(seed + h) % 2), h % 2
        this_round: list[tuple[int, TheirPlay]] = []
        while not match.is_over:
            view = match.view(match.to_move)
            if match.to_move != seat:
                move = theirs(match)
                if move.card is not None:
                    this_round.append((view.round, (Knowledge.of(view), match.core.export()["hand"][1 - seat], move)))
                match.play(move)
                continue
            if view.hidden_count(1 - seat):
                know = Knowledge.of(view)
                if know.plays or know.past:
                    out.append((know, match.core.export()["hand"][1 - seat],
                                [p for r, p in this_round if r == view.round]))
            match.play(mine(match))
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
    return card_log_likelihood(true_hand, counts, samples)


def card_log_likelihood(true_hand: int, counts: Mapping[int, float], samples: int) -> float:
    """The Bernoulli log-likelihood of the true hand over the unseen cards, each card's chance its
    count among `samples` worlds with half a count added (so no chance is 0)."""
    total = 0.0
    for c, n in counts.items():
        p = (n + 0.5) / (samples + 1)
        total += math.log(p if true_hand >> c & 1 else 1 - p)
    return total


def _as_holding(k: Knowledge, seat: int, then: int, holding: int) -> Knowledge:
    """The seat's knowledge `k` (at its play, holding `then`) as if it held `holding` instead: the
    cards swapped out are among those it cannot see."""
    unseen = [c for c in k.unseen if not holding >> c & 1] + [c for c in range(40) if then >> c & 1
                                                              and not holding >> c & 1]
    hands = list(k.base["hand"])
    hands[seat] = holding
    hidden = set(unseen)
    base = k.base.copy()
    base["hand"], base["stock"] = hands, [c for c in range(40) if c not in hidden] + unseen
    return dataclasses.replace(k, base=base, unseen=tuple(unseen))


def oracle_score(know: Knowledge, true_hand: int, plays: list[TheirPlay], method: SearchMethod | None,
                 iterations: int, temperature: float, samples: int) -> float:
    """score() with the oracle's card chances: every holding of the opponent's hidden cards weighed by
    the probability of its plays this round under its own search (--oracle)."""
    other = 1 - know.observer
    n = know.hidden[other]
    holdings = [sum(1 << c for c in cards) for cards in itertools.combinations(know.unseen, n)]
    logp = [0.0] * len(holdings)
    readable = plays and len(plays) == sum(p[0] == other for p in know.plays) and not know.base["hand"][other]
    for j, (then, hand_then, move) in enumerate(plays if readable else []):
        assert move.card is not None, "positions() keeps card plays only"
        later = sum(1 << p[2].card.index for p in plays[j:] if p[2].card is not None)
        for i, holding in enumerate(holdings):
            result = run_search(_as_holding(then, other, hand_then, holding | later),
                                SearchBudget(iterations=iterations, seed=i + 7919 * j),
                                Tuning(method=method, use_tables=False))
            figures = [(m.move, m.expected_points) for m in result.moves if m.move.card is not None]
            best = max(v for _, v in figures)
            chosen = next(v for m, v in figures if m == move)
            logp[i] += (chosen - best) / temperature - math.log(sum(math.exp((v - best) / temperature)
                                                                    for _, v in figures))
    top = max(logp)
    weights = [math.exp(v - top) for v in logp]
    total_w = sum(weights)
    counts = {c: samples * sum(w for w, h in zip(weights, holdings, strict=True) if h >> c & 1) / total_w
              for c in know.unseen}                             # exact shares, as counts among `samples`
    return card_log_likelihood(true_hand, counts, samples)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--opponent", type=engine, default="ismcts:10000it",
                    help="the engine whose hand is read (arena spec)")
    ap.add_argument("--me", type=engine, default="ismcts:1000it", help="the reading seat's engine (arena spec)")
    ap.add_argument("--hands", type=positive, default=150)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--samples", type=positive, default=300, help="worlds drawn per model and position")
    ap.add_argument("--models", default=DEFAULT_MODELS, help="NAME=KNOBS;... (arena knobs; the first is the yardstick)")
    ap.add_argument("--oracle", type=int, default=0, metavar="N",
                    help="also read by the opponent's own search, N iterations for each holding it could have "
                         "(flatmc or ismcts opponents; 0: off)")
    ap.add_argument("--oracle-t", type=float, default=0.1, metavar="T",
                    help="the oracle's softmax temperature, points (default 0.1)")
    args = ap.parse_args()
    if args.oracle < 0:
        ap.error(f"--oracle: a whole number of iterations >= 0 (0: off), got {args.oracle}")
    if args.oracle and args.opponent.kind not in ("flatmc", "ismcts"):
        ap.error(f"--oracle: reads a searching opponent (flatmc or ismcts), not {args.opponent}")
    if not (math.isfinite(args.oracle_t) and args.oracle_t > 0):
        ap.error(f"--oracle-t: a temperature > 0, got {args.oracle_t}")
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
    scores = {name: [score(k, hand, knobs, args.samples, i) for i, (k, hand, _) in enumerate(read)]
              for name, knobs in models.items()}
    if args.oracle:
        method = SearchMethod.FLAT if args.opponent.kind == "flatmc" else None
        scores["oracle"] = [oracle_score(k, hand, plays, method, args.oracle, args.oracle_t, args.samples)
                            for k, hand, plays in read]
    yardstick = next(iter(scores.values()))
    tag = str(args.opponent).replace(":", "_").replace(",", "_").replace("=", "")
    print(f"inference_positions_vs_{tag}: {len(read)} positions")
    for name, s in scores.items():
        gain = [a - b for a, b in zip(s, yardstick, strict=True)]
        half = 1.96 * statistics.stdev(gain) / math.sqrt(len(gain)) if len(gain) > 1 else 0.0
        mean = statistics.mean(gain)
        print(f"inference_gain_{name}_vs_{tag}: {mean:+.4f} nats per position "
              f"(95% CI {mean - half:+.4f} .. {mean + half:+.4f}) over {next(iter(scores))}")
    last_two = [k for k, _, _ in read if 40 - k.base["stock_pos"] <= 6]
    for name, knobs in models.items():
        if last_two and knobs.get("infer_t"):
            weights = [program_weight(k, knobs) for k in last_two]
            print(f"inference_program_{name}_vs_{tag}: {statistics.mean(weights):.3f} mean at the last two "
                  f"rounds, {100 * sum(w >= EXACT_PROGRAM for w in weights) / len(weights):.1f}% at or above "
                  f"{EXACT_PROGRAM} ({len(weights)} positions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
