"""Engines against each other in duplicate matches.

Each pair is one match played twice from the same seed, so with the same
deals, with the engines' seats swapped; every pairing of engines sees the same
seeds. What luck the cards bring to one side in one game it brings to the
other engine in the other, so the margin measures play, not cards.

Engines (`EngineSpec.parse`): ``random``, ``greedy`` (the core's greedy
policy), ``flatmc`` (flat Monte Carlo: every move on random worlds), ``ismcts``
(the search), ``cheat`` (the search on the true world: it sees every card, the
upper bound of what guessing better could gain), ``peek`` (the search seeing
every hand but not the order of the stock: what a perfect reading of the
others' hands could gain; cheat's edge over it is knowing the deals to come). A budget follows a colon:
``ismcts:100ms``, ``flatmc:20000it``; the default is 100 ms; the search runs to its end unless a stopping
knob (g=, se=, first=: search.StoppingRule) gives it a rule. ``default`` is the search at the default
budget (search.DEFAULT_BUDGET, the stopping rule's), as a hint that names no budget gets it. The strength
levels (solver/players.py LEVELS) play as ChooseMove plays them, at their own
budget, one thread, seeded: ``level:casual`` or simply ``casual``
(``level:random`` and ``level:greedy`` are ``random`` and ``greedy``).
``remote:HOST:PORT`` plays through a running server (another build, another
deployment): its hint at the server's default budget; ``remote:HOST:PORT:casual``
its ChooseMove at that strength; ``remote:HOST:PORT:10000it`` (or ``:100ms``)
its hint at that budget, spent whole. The arena's caller gives the player
that speaks to it (`arena`'s `players`: the command line's cli.remote.arena_player),
so that the solver needs no gRPC.

    cirulla arena ismcts:100ms greedy --pairs 200 --jobs 2
"""
from __future__ import annotations

import dataclasses
import math
import os
import random
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias, cast

from . import _search, record
from .errors import CirullaError, StateError
from .events import HandEnd
from .match import Match
from .moves import Move
from .players import LEVEL_NAMES, EnginePlayer
from .rules import Rules
from .search import (
    DEFAULT_BUDGET,
    Knowledge,
    Policy,
    SearchBudget,
    SearchMethod,
    SearchParams,
    StoppingRule,
    Tuning,
    match_sensitive,
    run_search,
    search,
)

ENGINES = ("random", "greedy", "flatmc", "ismcts", "cheat", "peek")
REMOTE = "remote"
MAX_HANDS = 200                 # a match still tied after this many hands counts as a draw


Knob: TypeAlias = float | int | str     # a tuning knob's value


def _policy(text: str) -> Policy:
    """The knobs pol= and ipol= (run_search's policy and infer_policy): a Policy
    by its name in lower case, pol=learned."""
    try:
        return Policy[text.upper()]
    except KeyError:
        raise ValueError(text) from None


def _flag(text: str) -> bool:
    """A yes/no knob: 1 or 0."""
    if text not in ("0", "1"):
        raise ValueError(text)
    return text == "1"


# a knob's short name: the field it sets (of Tuning, of its Searcher's knobs, or
# of the budget's StoppingRule), and how its text is read
TUNING: dict[str, tuple[str, Callable[[str], Knob]]] = {
    "c": ("c_ucb", float), "eps": ("eps_milli", int), "oeps": ("own_eps_milli", int), "follow": ("follow_min", int),
    "val": ("learned_value", int),
    "share": ("paired_share", float), "pick": ("pick", str), "own": ("follow_own", int),
    "inf": ("infer_t", float), "floor": ("root_floor", float), "pol": ("policy", _policy),
    "ipol": ("infer_policy", _policy), "spol": ("own_policy", _policy), "imix": ("infer_mix", float),
    "isoft": ("infer_soft", int), "isplit": ("infer_split", int), "iprog": ("infer_program", float),
    "xprog": ("exact_program", float), "xresp": ("exact_respond", _flag), "xslack": ("exact_slack", float),
    "xroll": ("exact_rollout_player", _flag),
    "match": ("sensitive", _flag),
    "g": ("min_gain", float), "se": ("target_stderr", float), "first": ("first_look", int)}
# what a knob's text must be, by how it is read
_KNOB_VALUES: dict[Callable[[str], Knob], str] = {
    float: "a number", int: "a whole number", str: "a word", _flag: "1 or 0",
    _policy: "a policy: " + ", ".join(p.name.lower() for p in Policy)}
TUNING_FIELDS = {f.name for f in dataclasses.fields(Tuning)}
STOPPING_FIELDS = {f.name for f in dataclasses.fields(StoppingRule)}


@dataclass(frozen=True)
class EngineSpec:
    kind: str
    time_ms: float | None = None
    iterations: int | None = None
    params: tuple[tuple[str, Knob], ...] = ()       # tuning knobs of the search
    level: str | None = None                        # kind "level" or "remote": a level's name
    address: str | None = None                      # kind "remote": the server's HOST:PORT

    @classmethod
    def parse(cls, text: str) -> EngineSpec:
        """``kind[:budget[:knobs]]``: budget ``100ms`` or ``5000it``; knobs (for
        tuning) like ``c=4,eps=100,follow=8,share=0.25,pick=paired,pol=learned``; or a
        strength level, ``level:NAME`` or ``NAME`` (no budget: the level's own);
        or ``remote:HOST:PORT[:LEVEL or budget]``.

        :raises CirullaError: for an unknown engine, level, budget or knob.
        """
        kind, _, rest = text.strip().lower().partition(":")
        if kind == REMOTE:
            return cls._remote(text, rest)
        if kind == "default":
            if rest:
                raise CirullaError(f"engine {text!r}: the default plays at the default budget")
            return cls("default")
        if kind == "level" or (kind in LEVEL_NAMES and kind not in ENGINES):
            name = rest if kind == "level" else kind
            if kind != "level" and rest:
                raise CirullaError(f"engine {text!r}: a level plays at its own budget")
            if name not in LEVEL_NAMES:
                raise CirullaError(f"engine {text!r}: the levels are {', '.join(LEVEL_NAMES)}")
            return cls(name) if name in ENGINES else cls("level", level=name)
        budget, _, knobs = rest.partition(":")
        if kind not in ENGINES:
            raise CirullaError(f"engine {text!r}: the engines are {', '.join(ENGINES)}, "
                               f"default (the search at its default budget), or a level: {', '.join(LEVEL_NAMES)}")
        if kind in ("random", "greedy"):
            if rest:
                raise CirullaError(f"engine {text!r}: {kind} takes no budget")
            return cls(kind)
        params = []
        for item in filter(None, knobs.split(",")):
            name, _, value = item.partition("=")
            if name not in TUNING:
                raise CirullaError(f"engine {text!r}: unknown knob {name!r} (knobs: {', '.join(TUNING)})")
            try:
                params.append((TUNING[name][0], TUNING[name][1](value)))
            except ValueError:
                raise CirullaError(f"engine {text!r}: {name}={value} is not {_KNOB_VALUES[TUNING[name][1]]}") from None
        _check_knobs(text, params)
        if not budget:
            return cls(kind, time_ms=100.0, params=tuple(params))
        time_ms, iterations = _budget(text, budget)
        return cls(kind, time_ms=time_ms, iterations=iterations, params=tuple(params))

    @classmethod
    def _remote(cls, text: str, rest: str) -> EngineSpec:
        """``remote:HOST:PORT`` with an optional level or budget after the port."""
        address, option = rest, ""
        host, _, last = rest.rpartition(":")
        if host and not (last.isascii() and last.isdigit()):
            address, option = host, last
        host, _, port = address.rpartition(":")
        if not host or not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:
            raise CirullaError(f"engine {text!r}: a remote engine is remote:HOST:PORT, like remote:127.0.0.1:50051, "
                               "then optionally a level (remote:HOST:PORT:casual) or a budget (:10000it, :100ms)")
        if not option:
            return cls(REMOTE, address=address)
        if option in LEVEL_NAMES:
            if option in ("random", "greedy"):
                raise CirullaError(f"engine {text!r}: a server plays the searching levels "
                                   f"({', '.join(n for n in LEVEL_NAMES if n not in ('random', 'greedy'))})")
            return cls(REMOTE, address=address, level=option)
        time_ms, iterations = _budget(text, option)
        return cls(REMOTE, address=address, time_ms=time_ms, iterations=iterations)

    def __str__(self) -> str:
        if self.kind == REMOTE:
            option = self.level or (f"{self.time_ms:g}ms" if self.time_ms is not None else
                                    f"{self.iterations}it" if self.iterations is not None else "")
            return f"{REMOTE}:{self.address}" + (f":{option}" if option else "")
        if self.level is not None:
            return self.level
        text = self.kind
        if self.time_ms is not None:
            text += f":{self.time_ms:g}ms"
        elif self.iterations is not None:
            text += f":{self.iterations}it"
        if self.params:
            short = {v[0]: k for k, v in TUNING.items()}
            text += ":" + ",".join(f"{short[k]}={v.name.lower() if isinstance(v, Policy) else v}"
                                   for k, v in self.params)
        return text


def _split_knobs(params: Sequence[tuple[str, Knob]]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A spec's knobs by where they go: the StoppingRule's, Tuning's and the Searcher's."""
    knobs: dict[str, Any] = dict(params)
    stopping = {k: knobs.pop(k) for k in list(knobs) if k in STOPPING_FIELDS}
    tuning = {k: knobs.pop(k) for k in list(knobs) if k in TUNING_FIELDS}
    return stopping, tuning, knobs


def _check_knobs(text: str, params: Sequence[tuple[str, Knob]]) -> None:
    """The knobs given where they go, on a fresh deal: a value out of its range
    is the spec's error, named, before a game starts."""
    stopping, tuning, knobs = _split_knobs(params)
    try:
        if stopping:
            StoppingRule(**stopping)
        Tuning(**tuning)
        Knowledge.of(Match(seed=0).view(0)).searcher(0, _search.StopFlag(), **knobs)
    except (ValueError, CirullaError) as e:
        raise CirullaError(f"engine {text!r}: {e}") from None


def _budget(text: str, budget: str) -> tuple[float | None, int | None]:
    """(time_ms, iterations) of a budget like ``100ms`` or ``5000it``."""
    try:
        if budget.endswith("ms") and float(budget[:-2]) > 0:
            return float(budget[:-2]), None
        if budget.endswith("it") and int(budget[:-2]) > 0:
            return None, int(budget[:-2])
    except ValueError:
        pass
    raise CirullaError(f"engine {text!r}: a budget is like 100ms or 5000it")


Player: TypeAlias = Callable[[Match], Move]            # a match at this engine's turn -> its move
PlayerFactory: TypeAlias = Callable[["EngineSpec", int], Player]    # a spec and a seed -> its player


def make_player(spec: EngineSpec, seed: int) -> Player:
    """A function from a match (at this engine's turn) to its move: the
    engines of this process (not ``remote``: see `arena`'s `players`)."""
    if spec.kind == REMOTE:
        raise CirullaError(f"engine {spec}: a remote engine plays through a server's client, which the "
                           "caller gives (`cirulla arena` does)")
    rnd = random.Random(seed)
    if spec.kind == "level":
        assert spec.level is not None, "a level engine names its level"
        return EnginePlayer(spec.level, seed).choose          # as ChooseMove plays it
    stopping, tuning, knobs = _split_knobs(spec.params)
    rule = StoppingRule(**stopping) if stopping else None
    by_match = tuning.pop("sensitive", True)        # match=0: rank by expected points alone

    def play(match: Match) -> Move:
        moves = match.legal_moves
        if spec.kind == "random":
            return rnd.choice(moves)
        if spec.kind == "greedy" or len(moves) == 1:
            return match.greedy_move()
        s = rnd.getrandbits(63)
        seat = match.to_move
        view = match.view(seat)
        if spec.kind == "default":
            return search(view, DEFAULT_BUDGET.replace(seed=s)).best
        budget = SearchBudget(time_ms=spec.time_ms, iterations=spec.iterations, seed=s, stopping=rule)
        if spec.kind == "cheat":
            know = Knowledge.true_world(match, seat)
        elif spec.kind == "peek":
            know = Knowledge.hands_seen(match, seat)
        else:
            know = Knowledge.of(view)
        method = SearchMethod.FLAT if spec.kind == "flatmc" else None
        return run_search(know, budget, Tuning(method=method, sensitive=by_match and match_sensitive(view),
                                               knobs=cast(SearchParams, knobs), **tuning)).best

    return play


@dataclass
class GameResult:
    """One match of a pair, from engine A's point of view."""
    hands: list[tuple[int, int]] = field(default_factory=list)   # (A's side points, B's) per hand
    a_won: float = 0.5          # 1, 0, or 0.5 for a draw
    times: tuple[list[float], list[float]] = field(default_factory=lambda: ([], []))


def seat_names(a: EngineSpec, b: EngineSpec, rules: Rules, a_side: int) -> list[str]:
    """Each seat's player name: its engine's (with " (A)" and " (B)" when both are the same engine)."""
    names = (str(a), str(b)) if str(a) != str(b) else (f"{a} (A)", f"{b} (B)")
    return [names[0] if rules.side_of(seat) == a_side else names[1] for seat in range(rules.players)]


def play_game(a: EngineSpec, b: EngineSpec, rules: Rules, seed: int, a_side: int,
              save: Path | None = None, players: PlayerFactory = make_player) -> GameResult:
    """One match from `seed` with engine A playing the seats of side a_side;
    with `save`, its record written in that folder as seed<seed>-AB.json (A on
    side 0) or seed<seed>-BA.json (B on side 0)."""
    match = Match(rules, seed=seed, dealer=seed % rules.players, names=seat_names(a, b, rules, a_side))
    engines = (players(a, seed * 2 + 1), players(b, seed * 2 + 2))
    out = GameResult()
    seen = 0
    while not match.is_over and len(out.hands) < MAX_HANDS:
        seat = match.to_move
        who = 0 if rules.side_of(seat) == a_side else 1
        t = time.perf_counter()
        move = engines[who](match)
        out.times[who].append(time.perf_counter() - t)
        match.play(move)
        for e in match.events[seen:]:
            if isinstance(e, HandEnd):
                pts = [s.total for s in e.sides]
                out.hands.append((pts[a_side], pts[1 - a_side]))
        seen = len(match.events)
    if match.winner is not None:
        out.a_won = 1.0 if match.winner == a_side else 0.0
    if save is not None:
        record.save(match, save / f"seed{seed}-{'AB' if a_side == 0 else 'BA'}.json")
    return out


def play_pair(a: EngineSpec, b: EngineSpec, rules: Rules, seed: int, save: Path | None = None,
              players: PlayerFactory = make_player) -> tuple[GameResult, GameResult]:
    """The same match (same deals) twice, A in side 0 then in side 1."""
    return play_game(a, b, rules, seed, 0, save, players), play_game(a, b, rules, seed, 1, save, players)


def _points(value: float, ci: tuple[float, float]) -> str:
    """A margin per hand with its 95% interval, as the arena's lines print it."""
    return f"{value:+.3f} points/hand (95% CI {ci[0]:+.3f} .. {ci[1]:+.3f})"


@dataclass(frozen=True)
class ArenaResult:
    a: str
    b: str
    pairs: int
    hands: int
    margin: float               # A's points minus B's, per hand
    margin_ci: tuple[float, float]
    hand_win: float             # share of hands A's side scored more (ties count half)
    hand_ties: float
    match_win: float            # share of matches A won (draws count half)
    match_win_ci: tuple[float, float]
    ms_per_move: tuple[float, float]

    def margin_line(self) -> str:
        return f"margin: {_points(self.margin, self.margin_ci)}"

    def lines(self) -> list[str]:
        mlo, mhi = self.match_win_ci
        return [
            f"arena: {self.a} vs {self.b}, {self.pairs} duplicate pairs, {self.hands} hands",
            self.margin_line(),
            f"hand_win: {100 * self.hand_win:.1f} % (ties {100 * self.hand_ties:.1f} %)",
            f"match_win: {100 * self.match_win:.1f} % (95% CI {100 * mlo:.1f} .. {100 * mhi:.1f})",
            f"time_per_move: {self.a} {self.ms_per_move[0]:.2f} ms, {self.b} {self.ms_per_move[1]:.2f} ms",
        ]


def _pair_points(pairs: Sequence[tuple[GameResult, GameResult]]) -> tuple[list[int], list[int]]:
    """Each pair's points for A less B's, and its hands."""
    return ([sum(x - y for g in p for x, y in g.hands) for p in pairs],
            [sum(len(g.hands) for g in p) for p in pairs])


def _residuals(d: Sequence[float], h: Sequence[int]) -> tuple[float, list[float]]:
    """The margin per hand (a ratio over pairs) and each pair's residual from it,
    scaled by the mean hands a pair: the delta method's terms, whose spread over
    pairs is the margin's standard error (the pair is the independent unit: its
    two games share the deals)."""
    hands = sum(h)
    margin = sum(d) / hands if hands else 0.0
    mean_h = hands / len(h) if h else 1.0
    return margin, [(di - margin * hi) / mean_h for di, hi in zip(d, h, strict=True)]


def _interval(mean: float, terms: Sequence[float]) -> tuple[float, float]:
    """mean's 95% interval from its terms' spread over pairs (infinite with fewer than 2)."""
    n = len(terms)
    se = math.sqrt(sum(t * t for t in terms) / (n * (n - 1))) if n > 1 else math.inf
    return mean - 1.96 * se, mean + 1.96 * se


def summarize(a: EngineSpec, b: EngineSpec, pairs: Sequence[tuple[GameResult, GameResult]]) -> ArenaResult:
    """Margin per hand as a ratio over pairs (the pair is the independent unit:
    its two games share the deals), with a delta-method 95% interval."""
    d, h = _pair_points(pairs)
    n, hands = len(pairs), sum(h)
    margin, resid = _residuals(d, h)
    every = [(x, y) for p in pairs for g in p for x, y in g.hands]
    wins = sum(x > y for x, y in every)
    ties = sum(x == y for x, y in every)
    won = _match_wins(pairs)
    mw = sum(won) / n if n else 0.0
    times = [[t for p in pairs for g in p for t in g.times[k]] for k in (0, 1)]
    a_ms, b_ms = (1000 * sum(t) / len(t) if t else 0.0 for t in times)
    return ArenaResult(str(a), str(b), n, hands, margin, _interval(margin, resid if hands else []),
                       (wins + ties / 2) / len(every) if every else 0.0,
                       ties / len(every) if every else 0.0,
                       mw, _interval(mw, [w - mw for w in won]), (a_ms, b_ms))


def _match_wins(pairs: Sequence[tuple[GameResult, GameResult]]) -> list[float]:
    """Each pair's share of its two matches A won (draws half)."""
    return [sum(g.a_won for g in p) / 2 for p in pairs]


def machine_load(load_before: float, seconds: float, workers: str) -> str:
    """How busy the machine was while something ran for `seconds` (wall-time
    budgets depend on what else it ran): the 1-minute load average before
    (os.getloadavg()[0], read by the caller) and now, the cores, and what
    `workers` the run itself kept busy (e.g. "2 jobs")."""
    return (f"{load_before:.2f} before, {os.getloadavg()[0]:.2f} after (1-minute load average, "
            f"{os.cpu_count()} cores, {workers}, {seconds:.0f} s)")


# play_pair's arguments
PairTask: TypeAlias = tuple[EngineSpec, EngineSpec, Rules, int, Path | None, PlayerFactory]


def _pair_job(args: PairTask) -> tuple[GameResult, GameResult]:
    return play_pair(*args)


def _played(tasks: Sequence[PairTask], jobs: int) -> Iterator[tuple[GameResult, GameResult]]:
    """Each task's pair, in the tasks' order: in this process, or in a pool of `jobs` processes."""
    if jobs <= 1:
        yield from map(_pair_job, tasks)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(_pair_job, tasks)


def _check_counts(who: str, **counts: int) -> None:
    """A run's pairs and jobs: 1 or more, else the error names the count."""
    for name, value in counts.items():
        if value < 1:
            raise StateError(f"{who}: {name} must be positive, got {value}")


def arena(a: EngineSpec | str, b: EngineSpec | str, *, rules: Rules | None = None, pairs: int = 100,
          seed: int = 0, jobs: int = 1, save: Path | None = None,
          on_pair: Callable[[int, ArenaResult], None] | None = None,
          players: PlayerFactory = make_player) -> ArenaResult:
    """Play `pairs` duplicate pairs of A against B (2 sides only); with `save`
    (an existing folder), every game's record written there (play_game).
    `players` makes each engine's player (make_player, or one that also knows
    ``remote`` engines; a module's function, for the worker processes).

    The pair k uses the match seed ``seed + k`` for every pairing of engines.
    :raises StateError: for rules with more than two sides.
    :raises OSError: when a record cannot be written.
    """
    a = a if isinstance(a, EngineSpec) else EngineSpec.parse(a)
    b = b if isinstance(b, EngineSpec) else EngineSpec.parse(b)
    rules = rules or Rules()
    if rules.n_sides != 2:
        raise StateError(f"arena: two sides only (2 or 4 players), not {rules.players} players")
    _check_counts("arena", pairs=pairs, jobs=jobs)
    tasks: list[PairTask] = [(a, b, rules, seed + k, save, players) for k in range(pairs)]
    done: list[tuple[GameResult, GameResult]] = []
    for r in _played(tasks, jobs):
        done.append(r)
        if on_pair:
            on_pair(len(done), summarize(a, b, done))
    return summarize(a, b, done)


@dataclass(frozen=True)
class Comparison:
    """Two engines each against the same opponent on the same deals (compare)."""
    a: ArenaResult              # A against the opponent
    b: ArenaResult              # B against the opponent
    margin_diff: float          # A's margin per hand less B's
    margin_diff_ci: tuple[float, float]
    match_win_diff: float       # A's share of matches won less B's
    match_win_diff_ci: tuple[float, float]

    def margin_line(self) -> str:
        return (f"margin_diff: {_points(self.margin_diff, self.margin_diff_ci)}, "
                f"{self.a.a} less {self.b.a}, paired by deal")

    def lines(self) -> list[str]:
        mlo, mhi = self.match_win_diff_ci
        out = [f"against {self.a.b}, {self.a.pairs} duplicate pairs each, the same deals:"]
        for res in (self.a, self.b):
            out.append(f"  {res.a}: {_points(res.margin, res.margin_ci)}")
        out.append(self.margin_line())
        out.append(f"match_win_diff: {100 * self.match_win_diff:+.1f} % (95% CI {100 * mlo:+.1f} .. {100 * mhi:+.1f})")
        return out


def _comparison(a: EngineSpec, b: EngineSpec, against: EngineSpec, done_a: Sequence[tuple[GameResult, GameResult]],
             done_b: Sequence[tuple[GameResult, GameResult]]) -> Comparison:
    """The Comparison of A's and B's pairs against the same opponent, pair k of
    each on the same deals: the difference of their margins (each a ratio over
    pairs) with a delta-method interval from the pairs' differences of residuals."""
    margin_a, resid_a = _residuals(*_pair_points(done_a))
    margin_b, resid_b = _residuals(*_pair_points(done_b))
    diff = margin_a - margin_b
    won = [x - y for x, y in zip(_match_wins(done_a), _match_wins(done_b), strict=True)]
    won_diff = sum(won) / len(won) if won else 0.0
    return Comparison(summarize(a, against, done_a), summarize(b, against, done_b),
                      diff, _interval(diff, [x - y for x, y in zip(resid_a, resid_b, strict=True)]),
                      won_diff, _interval(won_diff, [w - won_diff for w in won]))


def compare(a: EngineSpec | str, b: EngineSpec | str, against: EngineSpec | str, *, rules: Rules | None = None,
            pairs: int = 100, seed: int = 0, jobs: int = 1,
            on_pair: Callable[[int, Comparison], None] | None = None,
            players: PlayerFactory = make_player) -> Comparison:
    """A against `against` and B against it on the same deals (the pair k of
    both from the match seed ``seed + k``, as arena() plays them), and the
    difference of A's and B's margins paired deal by deal. A deal's luck is
    the same for both and cancels, so the difference's interval is narrower
    than the two runs' intervals would give taken apart (docs/strength.md,
    "Comparing two models on the same deals").

    :raises StateError: for rules with more than two sides.
    """
    a, b, c = (x if isinstance(x, EngineSpec) else EngineSpec.parse(x) for x in (a, b, against))
    rules = rules or Rules()
    if rules.n_sides != 2:
        raise StateError(f"compare: two sides only (2 or 4 players), not {rules.players} players")
    _check_counts("compare", pairs=pairs, jobs=jobs)
    tasks: list[PairTask] = [(x, c, rules, seed + k, None, players) for k in range(pairs) for x in (a, b)]
    done_a: list[tuple[GameResult, GameResult]] = []
    done_b: list[tuple[GameResult, GameResult]] = []
    for i, r in enumerate(_played(tasks, jobs)):
        (done_a if i % 2 == 0 else done_b).append(r)
        if on_pair and i % 2 == 1:
            on_pair(len(done_b), _comparison(a, b, c, done_a, done_b))
    return _comparison(a, b, c, done_a, done_b)


# --- the ladder of strength levels ----------------------------------------------------

def ladder_matchups(levels: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """(level, opponent) pairings of the ladder: each level against the one
    below it in players.LEVELS and, if that is not greedy, against greedy
    (greedy's step is against random). `levels` picks the upper members
    (default: every level above random)."""
    names = list(LEVEL_NAMES)
    chosen = names[1:] if levels is None else list(levels)
    out: list[tuple[str, str]] = []
    for name in chosen:
        i = names.index(name) if name in names else -1
        if i < 1:
            raise CirullaError(f"ladder: {name!r} is not a level above random ({', '.join(names[1:])})")
        out.append((name, names[i - 1]))
        if names[i - 1] not in ("greedy", "random"):
            out.append((name, "greedy"))
    return out


def ladder(levels: Sequence[str] | None = None, *, pairs: int = 200, seed: int = 0, jobs: int = 1,
           rules: Rules | None = None, matchups: Sequence[tuple[str, str]] | None = None,
           on_matchup: Callable[[ArenaResult], None] | None = None) -> dict[tuple[str, str], ArenaResult]:
    """Every ladder pairing (ladder_matchups(levels), or the `matchups` given)
    in duplicate single hands: `pairs` pairs each, the pair k from the match
    seed ``seed + k`` for every pairing, all of them in one pool of `jobs`
    processes."""
    rules = rules or Rules(hands=1)
    _check_counts("ladder", pairs=pairs, jobs=jobs)
    chosen = ladder_matchups(levels) if matchups is None else matchups
    specs = [(EngineSpec.parse(a), EngineSpec.parse(b)) for a, b in chosen]
    tasks: list[PairTask] = [(a, b, rules, seed + k, None, make_player) for a, b in specs for k in range(pairs)]
    done: dict[tuple[str, str], list[tuple[GameResult, GameResult]]] = {(str(a), str(b)): [] for a, b in specs}
    out: dict[tuple[str, str], ArenaResult] = {}

    def collect(task: PairTask, r: tuple[GameResult, GameResult]) -> None:
        a, b = task[0], task[1]
        got = done[(str(a), str(b))]
        got.append(r)
        if len(got) == pairs:
            out[(str(a), str(b))] = res = summarize(a, b, got)
            if on_matchup:
                on_matchup(res)

    for t, r in zip(tasks, _played(tasks, jobs), strict=True):
        collect(t, r)
    return {key: out[key] for key in done}
