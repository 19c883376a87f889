"""Rank every legal move from what one seat can see.

`search(view)` samples worlds consistent with the view (docs/rules.md section 8:
the unseen cards dealt at random to the other seats' hidden slots and the
stock, honouring the R-DECL-CHOICE inference, and drawn in proportion to how
well they explain the other seats' card plays this round: each play a choice
among the moves the world's holding allowed, by the kind of player the others
are read as: a program playing the greedy heuristic's best move, or one
choosing by the greedy worth or by the learned policy's score, each kind
weighed by its prior (INFER_PROGRAM, INFER_MIX) and by how well it explains
their plays of the hand's finished rounds, where their holdings are known
(_worlds.read_types, play_likelihood); the exact solver weighs its worlds
the same way), and then, by the position:

* one legal move: SearchMethod.FORCED, a short evaluation of it;
* 2 players, empty stock: the last round is perfect information, solved
  exactly (SearchMethod.EXACT);
* 2 players, a stock of 6 (the last two rounds): every opponent holding x
  every split of the last deal (at most 84 x 20 worlds), each world solved
  exactly and the values averaged (EXACT; the figures are exact averages,
  standard errors 0). Not with optional captures (R-MUST, `relaxed`): the
  trees there are about 6 times larger (0.5-1 s a position), so ISMCTS.
  Where several moves are worth the same against perfect play, rollouts on
  the same worlds order them (_exact_tiebreak); in the last round, how the
  other seat answers each, exactly: greedy's move by its weight as the
  program, else the move of a player who plays the round by rollouts, as flat
  Monte Carlo does (Searcher.vs_rollout_player). Against an opponent read as
  the greedy program (its weight at least Tuning.exact_program) each world
  is solved as the best response to it instead, its every move greedy's:
  minimax assumes a perfect opponent, the program is not one (+0.10 a hand
  against greedy over playing them out by rollouts, `docs/strength.md`);
* 4 players (two sides), empty stock, the other side both read as the
  program (the least of their weights at least EXACT_PROGRAM_SIDES): the
  last round's best response, every way the unseen cards lie in the three
  other hands (at most 1,680 worlds) solved with the other side's every
  move greedy's and the partner's and the asking seat's the best for their
  side (EXACT; +0.19 a hand against greedy, `docs/strength.md`); with a
  searching opponent, or optional captures, the tree below, as before;
* otherwise SO-ISMCTS with availability counts (ISMCTS) builds a tree over
  most of the budget, then a paired phase evaluates every legal move on the
  same fresh worlds, following the tree's most visited moves at the asking
  side's turns and the rollout policy at the others' and after the tree
  (follow_own: the others then play the cards they hold in that world, not
  the tree's choice averaged over worlds: +0.32 a hand against greedy, +0.33
  against flat Monte Carlo in the arena, `docs/strength.md`). The reported
  figures, their standard errors and the recommended move come from that
  paired phase, where every world is an independent draw, so the standard
  errors are honest.

The kernels are nogil C (`_worlds`, `_ismcts`, `_paired`, `_exact`, `_equity`), driven
through `_search.Searcher`; threads > 1 run one tree per
thread (root parallelization) and add their counts up.

Figures are margins: a side's hand points minus the average of the other
sides' (for 2 sides, own points minus the opponent's). `MoveStats.categories`
splits that margin by category (events.CATEGORIES), so the categories add up
to `expected_points`.

`run_search(knowledge, method=...)` is the entry for a world the caller
describes (the arena's all-seeing engine, the analysis's hindsight); `search`
and `flat_monte_carlo` are the entries for a seat's view.
"""
from __future__ import annotations

import dataclasses
import math
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypedDict, Unpack

from . import _search
from ._core import Policy as Policy  # run_search's policy and infer_policy, for its callers
from ._equity import EquityTable, hand_distribution
from .cards import mask_of
from .errors import StateError
from .events import CATEGORIES
from .match import Match
from .moves import Move
from .rules import Capture, Declarations, Rules
from .view import SeatView

if TYPE_CHECKING:
    from ._core import CoreFields, CoreMove
    from ._search import SearcherStats

__all__ = ["CancelToken", "DEFAULT_BUDGET", "Knowledge", "MoveStats", "RankedBy", "SearchBudget", "SearchMethod",
           "SearchResult", "StopReason", "StoppingRule", "Tuning", "search",
           "flat_monte_carlo", "run_search", "searcher_knobs", "match_sensitive", "equity_table", "win_chance",
           "dealer_edge"]

PAIRED_SHARE = 0.25         # of the budget, for the paired phase
MIN_WORLDS = 8              # the paired phase always sees at least this many worlds
FORCED_WORLDS = 64
TIE_WORLDS = 256            # rollouts that order the exact solver's equal best moves
TIE_EPS = 1e-9              # exact figures this close are equal (sums of weighted worlds)
INFER_T = 50.0              # the inference's temperature, in the greedy worth's units (a scopa is 100)
INFER_MIX = 0.5             # the inference's model of the others (2 players): the learned policy's weight
INFER_PROGRAM = 0.3         # the prior that a seat is a program playing greedy's best move
ROLLOUT_EPS = 200           # 2 players: the others' random moves in the rollouts, per 1000 (the Searcher's: 100)
OWN_ROLLOUT_EPS = 100       # and the asking side's own
OWN_ROLLOUT_EPS_SIDES = 200 # 4 players in two sides: the asking side's (both partners'), the others' the Searcher's
LEARNED_VALUE = 2           # 2 players: the rollouts' outcomes corrected by the learned value, as far as the
                            # other side does not read as the greedy program (the Searcher's: 0, off)
EXACT_PROGRAM = 0.9         # the program's weight from which the last rounds are its best response, not minimax
EXACT_PROGRAM_SIDES = 0.5   # the same with 4 players (the last round), the least of the other side's two
EQUITY_HANDS = 100_000      # greedy self-play hands behind the match-equity table
MAX_EQUITY_TARGET = 301


class SearchMethod(StrEnum):
    """How a search ranked the moves (see the module docstring)."""
    ISMCTS = "ismcts"
    FLAT = "flat"
    EXACT = "exact"
    FORCED = "forced"


class RankedBy(StrEnum):
    """What a search's order of the moves follows."""
    EXPECTED_POINTS = "expected_points"
    WIN_CHANCE = "win_chance"       # near the target, or with a cappotto in reach


@dataclass(frozen=True, kw_only=True)
class MoveStats:
    """One legal move with what the search found (cirulla.v1.MoveEvaluation's fields)."""
    move: Move
    expected_points: float   # expected hand margin of the asking side (points minus the others' average)
    expected_points_stderr: float
    diff_to_best: float      # expected_points - the recommended move's, paired on the same worlds
                             # (<= 0 when ranked by expected points)
    diff_to_best_stderr: float
    categories: dict[str, float]   # the margin split by category (adds up to expected_points)
    scopa_risk: float        # share of worlds where the next player can sweep the table right after
    win_chance: float | None # chance of winning the match (None without a 2-side equity table)
    samples: int             # worlds (or tree visits) behind these figures


class SearchInfo(TypedDict, total=False):
    """A search's counts beyond its figures."""
    worlds: int                     # paired (or exact) worlds
    nodes: int                      # tree nodes
    tree_iterations: int
    rejected: int                   # world draws the R-DECL-CHOICE inference rejected


@dataclass(frozen=True, kw_only=True)
class SearchResult:
    """A ranking of every legal move (cirulla.v1.Hint's fields, with its stats flat)."""
    moves: tuple[MoveStats, ...]   # every legal move, best first
    best: Move
    iterations: int                # playouts (and exactly solved positions) behind the result
    elapsed_ms: float
    stopped_because: StopReason | None   # None in an interim ranking (the search goes on)
    cpu_ms: float                  # the CPU time of the search's threads
    method: SearchMethod
    threads: int
    ranked_by: RankedBy = RankedBy.EXPECTED_POINTS   # WIN_CHANCE near the target / a cappotto in reach;
                                   # then diff_to_best (still in points) may be > 0
    info: SearchInfo = field(default_factory=SearchInfo, compare=False)

    @property
    def cut_short(self) -> bool:
        """Stopped before its budget: cancelled, or its deadline came first."""
        return self.stopped_because in (StopReason.DEADLINE, StopReason.CANCELLED)


class CancelToken:
    """Thread-safe: cancel() makes a running search stop within 50 ms."""

    def __init__(self) -> None:
        self._flag = _search.StopFlag()

    def cancel(self) -> None:
        self._flag.set()

    @property
    def cancelled(self) -> bool:
        return self._flag.is_set


# --- building the searchers ---------------------------------------------------

class SearchParams(TypedDict, total=False):
    """The Searcher's tuning knobs (_search.Searcher has their defaults)."""
    c_ucb: float                    # UCB's exploration constant
    eps_milli: int                  # the rollout policy's random moves, per 1000
    follow_min: int                 # visits a tree move needs to be followed in the paired phase
    follow_own: int                 # 1 (default): follow the tree at the asking side's moves only; 2: the
                                    # asking seat's (4 players: the partner too plays the rollout policy)
    root_floor: float               # the share of the tree's iterations spread over the root moves at least
    infer_t: float                  # the inference's temperature (0: worlds drawn uniformly)
    policy: Policy                  # the rollout policy (_core.choose_move)
    infer_policy: Policy            # the inference's model of the others' plays: GREEDY or LEARNED
    own_policy: Policy              # the asking side's own moves in the rollouts (default: policy)
    infer_mix: float                # the inference: the learned model's weight beside the greedy worth
    infer_soft: int                 # 1: a play's likelihood is its probability (0: by its regret)
    infer_program: float            # the prior that the others are a greedy program (the inference's third kind)
    infer_split: int                # 1: the two softmax kinds keep their prior split, each read on its own scale
    own_eps_milli: int              # the asking side's random moves in the rollouts, per 1000 (-1: eps_milli)
    learned_value: int              # the rollouts' outcomes corrected by the learned value (2 or 4 players):
                                    # 0 off, 1 on, 2 on as far as the other side does not read as the program


# --- what a search is asked -----------------------------------------------------

class StopReason(StrEnum):
    """Why a search stopped (cirulla.v1.StopReason)."""
    SETTLED = "settled"         # the stopping rule: the best move settled, the figures as precise as asked
    EXACT = "exact"             # every world solved exactly
    FORCED = "forced"           # one legal move
    BUDGET = "budget"           # the budget's cap: its iterations or its time
    DEADLINE = "deadline"       # the budget's deadline (a call's, a server's cap) came first
    CANCELLED = "cancelled"     # the cancel token


@dataclass(frozen=True, kw_only=True)
class StoppingRule:
    """When a search may stop before its cap: once more work is not worth its
    cost, and its figures are as precise as asked.

    After `first_look` iterations, and each time the iterations done double,
    the paired figures are read. For each move j other than the best, its
    difference to the best is a normal belief (the paired mean, the paired
    standard error s); doubling the work would sharpen it by
    s_next = s * sqrt(R / (N + R)) (N iterations done, R the next stage's,
    fewer near the cap), and could change the recommendation by as much as the
    knowledge gradient s_next * f(-lead / s_next), f(z) = z Phi(z) + phi(z)
    (Frazier, Powell and Dayanik, 2008): large when the runner-up is close
    against s (the best move is not settled, "best move stability"), nil when
    the lead is many standard errors or no stage is left (the runner-up cannot
    catch up). The search stops when the sum over the moves is below
    `min_gain` points per 10,000 iterations of the next stage (strength per
    CPU: two moves near equal are not worth a long search to tell apart), and
    every move's difference to the best is known within `target_stderr`
    points. Forced moves and exact solves stop when they are done, whatever
    the rule.
    """
    min_gain: float = 0.005
    target_stderr: float = 0.5
    first_look: int = 2_000

    def __post_init__(self) -> None:
        for name in ("min_gain", "target_stderr"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise StateError(f"stopping rule: {name} must be a finite number >= 0, got {value!r}")
        if type(self.first_look) is not int or self.first_look < 1:
            raise StateError(f"stopping rule: first_look must be a positive integer, got {self.first_look!r}")

    def settled(self, result: SearchResult, done: int, left: int) -> bool:
        """Whether `result`'s paired figures settle it, `done` iterations in and
        `left` to the cap."""
        if not result.info.get("worlds"):
            return False
        if any(m.diff_to_best_stderr > self.target_stderr for m in result.moves[1:]):
            return False
        step = min(done, left)
        if step <= 0:
            return True
        shrink = math.sqrt(step / (done + step))
        gain = sum(_knowledge_gradient(-m.diff_to_best, m.diff_to_best_stderr * shrink) for m in result.moves[1:])
        return gain < self.min_gain * step / 10_000


def _knowledge_gradient(lead: float, spread: float) -> float:
    """The expected gain of a sharper look at a move `lead` points behind the
    best, whose difference may move by a normal `spread` (points)."""
    if spread <= 0:
        return 0.0
    z = -abs(lead) / spread
    return spread * (z * 0.5 * math.erfc(-z / math.sqrt(2)) + math.exp(-z * z / 2) / math.sqrt(2 * math.pi))


@dataclass(frozen=True, kw_only=True)
class SearchBudget:
    """What a caller asks of one search: how much (caps on iterations and on
    time, from the search's start), by when (a monotonic `deadline`, in
    seconds, e.g. a call's), on how many threads, reproducible by which seed,
    when it may stop early (`stopping`; None: it runs to its cap), a token to
    cancel it and a callback for its interim rankings. Validated when made;
    the search decides the rest (its phases, their shares, cut short or not).

    With neither cap, the time cap is DEFAULT_TIME_CAP_MS. The same seed, one
    thread and an iteration cap (no time cap, no deadline reached) give the
    same answer every time.
    """
    iterations: int | None = None
    time_ms: float | None = None
    threads: int = 1
    seed: int = 0
    stopping: StoppingRule | None = None
    deadline: float | None = None
    cancel: CancelToken | None = field(default=None, compare=False)
    on_progress: Callable[[SearchResult], None] | None = field(default=None, compare=False)
    progress_interval_ms: float = 250.0

    def __post_init__(self) -> None:
        if self.iterations is not None and (type(self.iterations) is not int or self.iterations < 1):
            raise StateError(f"search budget: iterations must be a positive integer, got {self.iterations!r}")
        if self.time_ms is not None and not (isinstance(self.time_ms, (int, float)) and self.time_ms > 0):
            raise StateError(f"search budget: time_ms must be positive, got {self.time_ms!r}")
        if type(self.threads) is not int or self.threads < 1:
            raise StateError(f"search budget: threads must be a positive integer, got {self.threads!r}")
        if type(self.seed) is not int:
            raise StateError(f"search budget: seed must be an integer, got {self.seed!r}")
        if not self.progress_interval_ms > 0:
            raise StateError(f"search budget: progress_interval_ms must be positive, got "
                             f"{self.progress_interval_ms!r}")

    def replace(self, **changes: Any) -> SearchBudget:
        return dataclasses.replace(self, **changes)

    @classmethod
    def of(cls, *, iterations: int | None = None, time_ms: float | None = None,
           default_time_ms: float = 0.0, exhaust: bool = False, target_stderr: float | None = None,
           **rest: Any) -> SearchBudget:
        """The budget a caller names by its caps (a request's, a command's
        flags): with neither, the default budget's (its time cap
        `default_time_ms` if given); the default stopping rule (with its
        `target_stderr` if given) unless it asks to `exhaust` the caps;
        `rest` as SearchBudget's (threads, seed, deadline, ...)."""
        stopping = None if exhaust else DEFAULT_STOPPING
        if stopping is not None and target_stderr:
            stopping = dataclasses.replace(stopping, target_stderr=target_stderr)
        if not (iterations or time_ms):
            iterations, time_ms = DEFAULT_ITERATIONS, default_time_ms or DEFAULT_TIME_CAP_MS
        return cls(iterations=iterations or None, time_ms=time_ms or None, stopping=stopping, **rest)


# The one default budget: the hint of a request that names none, ChooseMove at
# full strength, `cirulla hint` and `play` (`docs/strength.md`; bench/bench_cost.py).
# The cap bounds the close calls the rule would go on with: 12,000 rather than
# 20,000 lost 0.005 points a decision (bench_stopping.py, 400 first-round
# decisions) and cut their 90th percentile of CPU from 42.6 to 29.4 ms.
DEFAULT_ITERATIONS = 12_000
DEFAULT_TIME_CAP_MS = 1_000.0
DEFAULT_STOPPING = StoppingRule()
DEFAULT_BUDGET = SearchBudget(iterations=DEFAULT_ITERATIONS, time_ms=DEFAULT_TIME_CAP_MS, stopping=DEFAULT_STOPPING)


@dataclass(frozen=True, kw_only=True)
class Tuning:
    """How a search runs, apart from its budget: for the arena, the analysis
    and the tuning scripts; the defaults are the engine's.

    `method` None picks it by the position (module docstring); FLAT is the
    baseline. `sensitive`: rank by the chance of winning the match where the
    equity table rates it (see match_sensitive); `use_tables` False: never
    build or read the tables. `knobs` go to the Searcher (SearchParams);
    `pick` = "visits" recommends the tree's most visited move instead of the
    paired phase's best. `solve_forced`: value a position with one legal move
    as any other (exactly where the last rounds are solved, else by the tree),
    not by a few playouts: the analysis values every position, and a forced
    move's must agree with its neighbours'. `focus`: a root move whose figures
    matter (the analysis's played move) gets focus_share of the tree at least.
    `exact_program`: the greedy program's weight (Searcher.type_weights) from
    which the last rounds are solved as the best response to the program (its
    every move greedy's), not by minimax (above 1: never; None:
    EXACT_PROGRAM, with 4 players EXACT_PROGRAM_SIDES); `exact_respond` False
    plays them out by rollouts instead. `exact_slack` (points): where the last
    rounds are solved by minimax, the moves this close to the best are ordered
    by rollouts on the same worlds too, as equal ones are (minimax assumes an
    opponent who sees every card; 0: equal ones only). `exact_rollout_player`:
    in the last round of 2 players they are ordered instead by how the other
    seat would answer them, greedy's move by its weight as the program, else a
    player's who plays the round by rollouts, as flat Monte Carlo does
    (Searcher.vs_rollout_player); False: by rollouts there too.
    """
    method: SearchMethod | None = None
    sensitive: bool = False
    use_tables: bool = True
    paired_share: float = PAIRED_SHARE
    pick: str = "paired"
    solve_forced: bool = False
    focus: Move | None = None
    focus_share: float = 0.5
    exact_program: float | None = None
    exact_respond: bool = True
    exact_slack: float = 0.0
    exact_rollout_player: bool = True
    knobs: SearchParams = field(default_factory=lambda: SearchParams())

    def __post_init__(self) -> None:
        # the shares are fractions; exact_program inf: never the best response (NaN fails every test)
        for name, top in (("paired_share", 1.0), ("focus_share", 1.0), ("exact_program", math.inf),
                          ("exact_slack", math.inf)):
            value = getattr(self, name)
            if value is None and name == "exact_program":
                continue
            if not (isinstance(value, (int, float)) and 0 <= value <= top):
                bound = f"a number from 0 to {top:g}" if top < math.inf else "a number >= 0"
                raise StateError(f"tuning: {name} must be {bound}, got {value!r}")
        if self.pick not in ("paired", "visits"):
            raise StateError(f"tuning: pick must be 'paired' or 'visits', got {self.pick!r}")


# another seat's card play: (seat, the table before it, card, the cards it took, the
# cards each seat played after it in its round)
SeenPlay: TypeAlias = tuple[int, int, int, int, tuple[int, ...]]


@dataclass(frozen=True)
class Knowledge:
    """What the search needs from a view: the public state as the core's fields
    (other seats' hidden slots empty) and how to fill the hidden part."""
    rules: Rules
    base: CoreFields
    observer: int
    unseen: tuple[int, ...]
    hidden: tuple[int, ...]
    nobuona: tuple[int, ...]
    played: tuple[int, ...]
    scores: tuple[int, ...]
    fixed: bool = False
    plays: tuple[SeenPlay, ...] = ()   # the other seats' card plays this round
    past: tuple[SeenPlay, ...] = ()    # theirs in the hand's finished rounds (every holding known)

    @classmethod
    def of(cls, view: SeatView) -> Knowledge:
        r, n = view.rules, view.rules.players
        seat = view.seat
        base = view.core_fields()
        unseen = base["stock"][40 - len(view.unseen()):]
        # R-DECL-CHOICE: with mandatory declarations, a seat that played this
        # round without declaring held no buona
        mandatory = r.declarations is Declarations.MANDATORY
        nobuona = [int(mandatory and s != seat and not view.declared[s]
                       and bool(view.played_this_round[s])) for s in range(n)]
        return cls(r, base, seat, tuple(unseen), tuple(view.hidden_count(s) for s in range(n)),
                   tuple(nobuona), tuple(mask_of(p) for p in view.played_this_round),
                   tuple(view.scores), plays=_seen_plays(view, view.round_plays()),
                   past=tuple(p for rows in view.finished_round_plays() for p in _seen_plays(view, rows)))

    @classmethod
    def true_world(cls, match: Match, seat: int) -> Knowledge:
        """The whole state of a match (the cheating player: nothing is sampled)."""
        n = match.rules.players
        return cls(match.rules, match.core.export(), seat, (), (0,) * n, (0,) * n, (0,) * n,
                   tuple(match.scores), fixed=True)

    @classmethod
    def hands_seen(cls, match: Match, seat: int) -> Knowledge:
        """Every hand in play, but not the order of the stock (the arena's
        ``peek``: the most a perfect reading of the others' hands could gain;
        the rest of the all-seeing engine's edge is knowing the deals to come)."""
        n, base = match.rules.players, match.core.export()
        return cls(match.rules, base, seat, tuple(base["stock"][base["stock_pos"]:]), (0,) * n, (0,) * n,
                   (0,) * n, tuple(match.scores))

    def searcher(self, seed: int, stop: _search.StopFlag, *, equity: EquityTable | None = None,
                 match_mode: bool = False, **params: Unpack[SearchParams]) -> _search.Searcher:
        r = self.rules
        return _search.Searcher(
            r.core, self.base, observer=self.observer, unseen=list(self.unseen),
            hidden=list(self.hidden), nobuona=list(self.nobuona), played=list(self.played),
            plays=list(self.plays), past=list(self.past),
            fixed=self.fixed, seed=seed & (2**64 - 1), stop=stop, equity=equity,
            scores=list(self.scores), match_mode=match_mode,
            next_dealer_side=r.side_of((self.base["dealer"] + 1) % r.players), **params)


def _seen_plays(view: SeatView, plays: list[tuple[int, int, int, Move]]) -> tuple[SeenPlay, ...]:
    """The other seats' card plays in one round of the view's hand (rows as
    SeatView.round_plays gives them): what the inference from plays reads."""
    after, out = [0] * view.rules.players, []
    for _, seat, table, move in reversed(plays):     # the latest first
        assert move.card is not None, "round_plays() gives card plays only"
        if seat != view.seat:
            out.append((seat, table, move.card.index, mask_of(move.captured), tuple(after)))
        after[seat] |= 1 << move.card.index
    return tuple(reversed(out))


# --- match equity ---------------------------------------------------------------

def _distribution_key(rules: Rules) -> Rules:
    return rules.replace(target=51, hands=None, name="classic")


HandDistribution: TypeAlias = tuple[list[list[int]], int, int]
MAX_DISTRIBUTIONS = 64              # option sets whose self-play is kept (each a few hundred KB)
_distributions: dict[Rules, HandDistribution] = {}
_building: dict[Rules, Future[None]] = {}
_tables_lock = threading.Lock()
_builder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cirulla-tables")
BUILDER_NICENESS = 10               # the searches that answer calls come first on a busy machine


def _lower_priority() -> None:
    """Lower this thread's CPU priority (Linux: a thread has its own nice value)."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BUILDER_NICENESS)
    except (AttributeError, OSError):
        pass                        # elsewhere, or not allowed: the tables come as fast, no harm


def _hand_distribution(rules: Rules) -> HandDistribution:
    """Greedy self-play hand results for these rules (2 sides; `rules` a
    _distribution_key), kept for the last MAX_DISTRIBUTIONS option sets."""
    got = _distributions.get(rules)
    if got is None:
        got = hand_distribution(rules.core, EQUITY_HANDS, 0xC1C1)    # ~0.3 s, without the GIL
        with _tables_lock:
            while len(_distributions) >= MAX_DISTRIBUTIONS:
                _distributions.pop(next(iter(_distributions)))
            got = _distributions.setdefault(rules, got)
    return got


def tables_ready(rules: Rules) -> bool:
    """Whether the tables these rules' searches read are built: the hand
    distribution behind match_sensitive (about 0.2 s of self-play the first
    time for an option set) and the match-equity table (up to 0.2 s more for
    a target of 301). If not, they are built in the background; a caller that
    must not wait (a server within a deadline) searches without them
    meanwhile: ranked by expected points, no chance of winning."""
    if _distribution_key(rules) in _distributions and (not _has_equity(rules) or rules in _equities):
        return True
    with _tables_lock:
        if rules not in _building:
            _building[rules] = _builder.submit(_build_in_background, rules)
    return False


def tables_building(rules: Rules) -> bool:
    """Whether these rules' tables are being built in the background, or wait
    for the builder (tables_ready started it); once built they are forgotten
    here, so the option sets ever seen do not pile up."""
    with _tables_lock:
        return rules in _building


def _build_in_background(rules: Rules) -> None:
    _lower_priority()
    try:
        build_tables(rules)
    finally:                        # forgotten once built: one entry per option set ever seen would grow
        with _tables_lock:
            _building.pop(rules, None)


def build_tables(rules: Rules) -> None:
    """Build the tables of these rules now (see tables_ready)."""
    _hand_distribution(_distribution_key(rules))
    equity_table(rules)


_equities: dict[Rules, EquityTable] = {}


def _equity(rules: Rules) -> EquityTable:
    got = _equities.get(rules)
    if got is None:
        counts, cd, co = _hand_distribution(_distribution_key(rules))
        got = EquityTable(counts, cd, co, rules.target)
        with _tables_lock:
            while len(_equities) >= MAX_DISTRIBUTIONS:
                _equities.pop(next(iter(_equities)))
            got = _equities.setdefault(rules, got)
    return got


def _has_equity(rules: Rules) -> bool:
    return rules.n_sides == 2 and rules.hands is None and rules.target <= MAX_EQUITY_TARGET


def equity_table(rules: Rules) -> EquityTable | None:
    """The match-equity table for these rules, or None where it does not apply:
    3 or more sides (not modelled: the search reports no win chance there), a
    match of a fixed number of hands (R-HANDS-LIMIT) or a target above 301."""
    return _equity(rules) if _has_equity(rules) else None


def win_chance(rules: Rules, scores: tuple[int, int], dealer: int) -> float | None:
    """P(side 0 wins the match) at these scores with `dealer` dealing the next hand."""
    table = equity_table(rules)
    if table is None:
        return None
    return table.win0(scores[0], scores[1], rules.side_of(dealer))


@lru_cache(maxsize=16)
def _hand_points_p99(rules: Rules) -> int:
    """Points a side scores in a hand at most, 99 times in 100 (greedy self-play)."""
    counts, _, _ = _hand_distribution(_distribution_key(rules))
    by_points = [0] * len(counts)
    for x, row in enumerate(counts):
        for y, k in enumerate(row):
            by_points[x] += k
            by_points[y] += k
    total, acc = sum(by_points), 0
    for p, k in enumerate(by_points):
        acc += k
        if acc >= 0.99 * total:
            return p
    return len(by_points) - 1


def dealer_edge(rules: Rules) -> float:
    """The dealer's side's mean hand margin in the engine's greedy self-play
    (the distribution behind the match-equity table): the dealer's seat is
    worth this much before any card is seen (2 sides)."""
    counts, _, _ = _hand_distribution(_distribution_key(rules))
    total = sum(map(sum, counts)) or 1
    return sum((x - y) * k for x, row in enumerate(counts) for y, k in enumerate(row)) / total


def match_sensitive(view: SeatView) -> bool:
    """Rank by the chance of winning the match: when a side could reach the
    target with this hand (its score plus the 99th percentile of a hand's
    points), or a cappotto is in reach (one side holds 5 or more diamonds and
    the others none, R-CAPPOTTO)."""
    r = view.rules
    if max(view.scores) + _hand_points_p99(r) >= r.target:
        return True
    diamonds = [sum(1 for c in pile if c.suit == 0) for pile in view.piles]
    return any(d >= 5 and sum(diamonds) == d for d in diamonds)


# --- the search -----------------------------------------------------------------

def _check(view: SeatView) -> None:
    view.validate()
    if view.to_move != view.seat:
        raise StateError(f"search: it is seat {view.to_move}'s turn, not seat {view.seat}'s")
    if not view.hand:
        raise StateError(f"search: seat {view.seat} holds no cards: the hand is not in play")


def search(view: SeatView, budget: SearchBudget = DEFAULT_BUDGET, *, wait_for_tables: bool = True) -> SearchResult:
    """Every legal move of the seat to move, ranked, from what that seat sees.

    The budget defaults to DEFAULT_BUDGET (the stopping rule, capped). The
    first search of an option set builds its tables (tables_ready); with
    wait_for_tables False it does not wait for them.

    :raises StateError: if the view cannot be, or it is not the seat's turn in a hand in play.
    """
    _check(view)
    tables = wait_for_tables or tables_ready(view.rules)
    return run_search(Knowledge.of(view), budget,
                      Tuning(use_tables=tables, sensitive=tables and match_sensitive(view)))


def flat_monte_carlo(view: SeatView, budget: SearchBudget = DEFAULT_BUDGET) -> SearchResult:
    """The baseline: every legal move played out with the rollout policy on the
    same random worlds for the whole budget (no tree, no exact endgames)."""
    _check(view)
    return run_search(Knowledge.of(view), budget, Tuning(method=SearchMethod.FLAT, sensitive=match_sensitive(view)))


def _thread_seed(seed: int, t: int) -> int:
    x = (seed * 0x9E3779B97F4A7C15 + t * 0xBF58476D1CE4E5B9 + 0x632BE59BD9B4E019) & (2**64 - 1)
    return x ^ (x >> 29)


def _pick_method(know: Knowledge, n_moves: int, tuning: Tuning, program: float) -> SearchMethod:
    """The method for this position (module docstring); `program`: the weight
    of the greedy program among the kinds of player the other side's seats are
    read as (the least of theirs)."""
    if tuning.method is not None:
        return tuning.method
    rules, stock = know.rules, 40 - know.base["stock_pos"]
    if n_moves == 1 and not tuning.solve_forced:
        return SearchMethod.FORCED
    if rules.players == 2 and (stock == 0 or (stock == 6 and rules.capture is Capture.MANDATORY)) \
            and (tuning.exact_respond or not _reads_as_program(tuning, program, rules)):
        return SearchMethod.EXACT     # the last round, or the last two: see the module docstring
    # two sides: the last round's best response to the program (not with optional captures, where the
    # partners' choices make it about 5 times as costly: p95 0.2 s)
    if rules.players > 2 and rules.n_sides == 2 and stock == 0 and rules.capture is Capture.MANDATORY \
            and tuning.exact_respond and _reads_as_program(tuning, program, rules):
        return SearchMethod.EXACT
    return SearchMethod.ISMCTS


def _reads_as_program(tuning: Tuning, program: float, rules: Rules) -> bool:
    """Whether the other side, the greedy program by this weight, is played as one in the last rounds."""
    if tuning.exact_program is not None:
        return program >= tuning.exact_program
    # with 4 players a hand has three rounds: by the last the weight reads fewer plays (about 0.8 against greedy)
    return program >= (EXACT_PROGRAM if rules.players == 2 else EXACT_PROGRAM_SIDES)


def searcher_knobs(rules: Rules, tuning: Tuning = Tuning()) -> SearchParams:
    """The Searcher's knobs run_search gives it: the inference's defaults for
    these rules, then tuning.knobs."""
    # the baseline samples worlds uniformly; the search weighs them by the plays seen, each
    # seat read as the greedy program or otherwise; with 2 players the others by the plays'
    # probabilities under both softmax models (the learned one alone at its own temperature
    # reads a searching player's hand better, bench/bench_inference.py, but played no
    # stronger in the arena and cost 1.1 times the CPU: README); with more, by greedy's
    # regret (the learned model on every play of three other seats made a decision 2.6
    # times as costly)
    knobs = SearchParams(infer_t=0.0 if tuning.method is SearchMethod.FLAT else INFER_T, infer_program=INFER_PROGRAM)
    if rules.players == 2:
        knobs["infer_mix"], knobs["infer_soft"] = INFER_MIX, 1
        # the others' rollout moves trusted less than the asking side's own (with 4 players it
        # measured weaker: README), and the rollouts' outcomes corrected by the learned value
        # (bench/value_screen.py; its 4-player model measured level, so off there: docs/strength.md);
        # flat Monte Carlo stays the yardstick it was
        if tuning.method is not SearchMethod.FLAT:
            knobs["eps_milli"], knobs["own_eps_milli"] = ROLLOUT_EPS, OWN_ROLLOUT_EPS
            knobs["learned_value"] = LEARNED_VALUE
    elif rules.players == 4 and tuning.method is not SearchMethod.FLAT:
        # with two sides of partners the other way round: the asking side's own rollout moves one in five at
        # random, the others' one in ten (+0.07 a hand against greedy over 2,500 deals, level head to head:
        # docs/strength.md)
        knobs["own_eps_milli"] = OWN_ROLLOUT_EPS_SIDES
    knobs.update(tuning.knobs)
    return knobs


def run_search(know: Knowledge, budget: SearchBudget = DEFAULT_BUDGET, tuning: Tuning = Tuning()) -> SearchResult:
    """The search behind search() and flat_monte_carlo(), on what `know` says,
    within `budget` (validated when it was made), run as `tuning` says.

    The budget's caps split between the tree and the paired phase
    (tuning.paired_share of it to the paired phase) and between its threads;
    with a stopping rule, in stages that double from the rule's first look,
    each a tree's growth then the paired worlds that catch up with it, until the
    rule says settled or a cap is reached. The result says why it stopped
    (StopReason) and what it spent.
    """
    rules = know.rules
    equity = equity_table(rules) if tuning.use_tables else None   # built once per rules (~0.3 s)
    start, cpu_start = time.monotonic(), time.thread_time()
    stop = budget.cancel._flag if budget.cancel is not None else _search.StopFlag()
    match_mode = bool(tuning.sensitive and equity is not None)
    threads, seed = budget.threads, budget.seed
    knobs = searcher_knobs(rules, tuning)
    searchers = [know.searcher(_thread_seed(seed, t), stop, equity=equity, match_mode=match_mode, **knobs)
                 for t in range(threads)]
    n_moves = len(searchers[0].root_moves)
    if n_moves == 0:
        raise StateError("search: no legal move (the hand is not in play)")
    if tuning.focus is not None:
        at = [Move.from_core(m, rules.matta_card) for m in searchers[0].root_moves].index(tuning.focus)
        for s in searchers:
            s.focus_on(at, tuning.focus_share)
    kinds = searchers[0].type_weights
    side = rules.side_of(know.observer)
    program = min(kinds[s][0] for s in range(len(kinds)) if rules.side_of(s) != side)
    method = _pick_method(know, n_moves, tuning, program)
    respond = method is SearchMethod.EXACT and _reads_as_program(tuning, program, rules)
    time_ms = budget.time_ms
    if budget.iterations is None and time_ms is None:
        time_ms = DEFAULT_TIME_CAP_MS
    cap_end = start + time_ms / 1000.0 if time_ms is not None else math.inf
    end = min(cap_end, budget.deadline if budget.deadline is not None else math.inf)
    end_arg = end if end != math.inf else 0.0       # the kernels' "no time limit"
    iterations = budget.iterations
    share = 1.0 if method is SearchMethod.FLAT else tuning.paired_share
    rule = budget.stopping if method in (SearchMethod.ISMCTS, SearchMethod.FLAT) else None
    counted = iterations is not None or rule is not None   # stages of iterations, not the time alone
    cut = [False] * threads
    cpu = [0.0] * threads           # the CPU time of the threads other than this one

    def tree_to(s: _search.Searcher, target: int) -> None:
        """Grow this thread's tree to `target` iterations (of the whole budget)."""
        want = int(max(target * (1 - share) / threads, 1)) if counted else 2**62
        t_tree = start + (1 - share) * (end - start) if end_arg else 0.0
        done = s.stats()["iterations"]
        if done < want:
            s.ismcts(want - done, t_tree)

    def paired_to(s: _search.Searcher, target: int) -> int:
        """Run this thread's paired worlds up to their share of `target`; the
        worlds it still lacked when the time or the stop came."""
        want = max(int(target * share / n_moves / threads), MIN_WORLDS) if counted else 2**62
        done = s.stats()["worlds"]
        if done >= want:
            return 0
        return want - done - s.paired(want - done, end_arg, max(MIN_WORLDS - done, 0))

    def work(t: int, s: _search.Searcher, target: int, pooled: bool) -> None:
        t0 = time.thread_time()
        try:
            if method is SearchMethod.EXACT:
                # tens of ms (bench_search.py); a time limit or a cancel cuts it short,
                # and the holdings solved by then are a fair sample of them all
                cut[t] = s.exact(t, threads, end_arg, respond) < 0
                if cut[t] and not s.stats()["worlds"]:
                    s.paired(MIN_WORLDS, 0.0, MIN_WORLDS)      # no world solved in time: a few played out
                return
            if method is SearchMethod.FORCED:
                s.paired(FORCED_WORLDS // threads + 1, 0.0, FORCED_WORLDS // threads + 1)
                return
            if method is SearchMethod.ISMCTS:
                tree_to(s, target)
                if stop.is_set and s.stats()["iterations"] >= MIN_WORLDS * n_moves and not s.stats()["worlds"]:
                    cut[t] = True
                    return      # stopped: the tree's figures stand (a paired phase of a few worlds would be noise)
            cut[t] = paired_to(s, target) > 0
        finally:
            if pooled:
                cpu[t] += time.thread_time() - t0

    next_report = time.monotonic() + max(budget.progress_interval_ms, 1.0) / 1000.0   # the next interim ranking

    def run_stage(target: int) -> None:
        nonlocal next_report
        if threads == 1 and budget.on_progress is None:
            work(0, searchers[0], target, False)
            return
        pool = [threading.Thread(target=work, args=(t, s, target, True), daemon=True) for t, s in enumerate(searchers)]
        for th in pool:
            th.start()
        on_progress = budget.on_progress
        interval = max(budget.progress_interval_ms, 1.0) / 1000.0
        while any(th.is_alive() for th in pool):
            for th in pool:
                th.join(timeout=max(0.0, next_report - time.monotonic()) if on_progress else None)
                if on_progress and time.monotonic() >= next_report:
                    break
            if on_progress and time.monotonic() >= next_report and any(th.is_alive() for th in pool):
                on_progress(snapshot(None))
                next_report = time.monotonic() + interval


    slack = tuning.exact_slack if method is SearchMethod.EXACT and not respond and not match_mode else 0.0

    def snapshot(reason: StopReason | None, tiebreak: list[float] | None = None) -> SearchResult:
        elapsed = (time.monotonic() - start) * 1000.0
        # the CPU clock only in the final ranking: reading it costs more than the monotonic clock
        cpu_ms = (time.thread_time() - cpu_start + sum(cpu)) * 1000.0 if reason is not None else 0.0
        return _result([s.stats() for s in searchers], searchers[0].root_moves, rules, method,
                       elapsed, reason, cpu_ms, threads, equity is not None, match_mode,
                       tuning.pick if method is SearchMethod.ISMCTS else "paired", tiebreak, slack)

    def why_cut() -> StopReason:
        if stop.is_set:
            return StopReason.CANCELLED
        if time.monotonic() >= end and end < cap_end:
            return StopReason.DEADLINE
        return StopReason.BUDGET

    cap = iterations or 2**62
    target = min(rule.first_look, cap) if rule is not None else cap
    while True:
        run_stage(target)
        if stop.is_set or any(cut):
            reason = why_cut()
            break
        if method in (SearchMethod.EXACT, SearchMethod.FORCED):
            reason = StopReason(method.value)
            break
        if target >= cap or time.monotonic() >= end:
            reason = why_cut()
            break
        assert rule is not None, "without a rule the one stage is the whole cap"
        left = min(cap - target, (end - time.monotonic()) / (time.monotonic() - start) * target) \
            if end != math.inf else cap - target
        if rule.settled(snapshot(None), target, int(left)):
            reason = StopReason.SETTLED
            break
        target = min(2 * target, cap)
    if method is SearchMethod.EXACT and not stop.is_set and not sum(s.stats()["worlds"] for s in searchers):
        if not any(know.nobuona):
            raise StateError("search: no world fits the view (its counts of hidden cards and stock "
                             "cannot be dealt)")
        # no world passes the R-DECL-CHOICE inference: the view contradicts it
        # (a hand-made one); solve every world instead, once
        return run_search(dataclasses.replace(know, nobuona=(0,) * len(know.nobuona)), budget, tuning)
    solved = snapshot(reason)
    if method is SearchMethod.EXACT and reason is StopReason.EXACT:
        tiebreak = _exact_tiebreak(know, solved, searchers[0], seed, stop, equity, match_mode, end_arg, knobs, slack,
                                   program if tuning.exact_rollout_player and not respond else None)
        if tiebreak is not None:
            return snapshot(reason, tiebreak)
    return solved


def _exact_tiebreak(know: Knowledge, solved: SearchResult, solver: _search.Searcher, seed: int,
                    stop: _search.StopFlag, equity: EquityTable | None, match_mode: bool, deadline: float,
                    params: SearchParams, slack: float = 0.0, program: float | None = None) -> list[float] | None:
    """Where the exact solver finds several best moves of equal value, their
    figures from rollouts on the same worlds (the rollout policy playing both
    sides), by root move; None without a tie. Minimax rates them alike because
    it assumes a perfect opponent; the rollouts tell which one leaves a real
    one more room to go wrong. Taking the first of them instead, the exact
    solve of the last round cost 0.39 points a hand against greedy (README
    "Equal exact moves"). With the other side's weight as the greedy program
    (`program`, not None), in the last round (one world) by their margins
    against it, exactly: the program's move by that weight, else the move of a
    player who plays the round by rollouts, as flat Monte Carlo does
    (docs/strength.md, "The last round against a player who plays it by
    rollouts"), walked by `solver`, the exact solve's own Searcher."""
    mean = [m.expected_points for m in solved.moves]
    key = [m.win_chance or 0.0 for m in solved.moves] if match_mode else mean
    if len(_equal_to_best(key, mean, 0, slack)) < 2:     # solved.moves[0] is the best
        return None
    if program is not None and (against := solver.vs_rollout_player(program)) is not None:
        return against
    s = know.searcher(_thread_seed(seed, 1 << 20), stop, equity=equity, match_mode=match_mode, **params)
    s.paired(TIE_WORLDS, deadline, MIN_WORLDS)
    st = s.stats()
    return [v / st["weight"] for v in (st["p_win"] if match_mode else st["p_sum"])]


def _equal_to_best(key: list[float], mean: list[float], best: int, slack: float = 0.0) -> list[int]:
    """The moves whose ranking figure and expected points equal the best's (to
    TIE_EPS), or come within `slack` of them."""
    near = TIE_EPS + slack
    return [i for i in range(len(key)) if key[i] > key[best] - near and mean[i] > mean[best] - near]


def _result(stats: list[SearcherStats], root: list[CoreMove], rules: Rules, method: SearchMethod,
            elapsed_ms: float, reason: StopReason | None, cpu_ms: float, threads: int, has_equity: bool,
            match_mode: bool,
            pick: str = "paired", tiebreak: list[float] | None = None, slack: float = 0.0) -> SearchResult:
    """`tiebreak`: a figure by root move that orders moves whose figures are
    equal (to TIE_EPS; the exact solver's, _exact_tiebreak), or within `slack`."""
    n = len(root)
    tb = tiebreak or [0.0] * n
    matta = rules.matta_card
    moves = [Move.from_core(t, matta) for t in root]

    def add(key: Literal["msum", "sum2", "win", "p_sum", "p_win", "p_risk"]) -> list[float]:
        """A figure by move, summed over the threads' searchers."""
        return [sum(s[key][i] for s in stats) for i in range(n)]

    visits = [sum(s["visits"][i] for s in stats) for i in range(n)]
    worlds = sum(s["worlds"] for s in stats)
    weight = sum(s["weight"] for s in stats)        # = worlds but where the exact solver weighs them
    playouts = sum(s["playouts"] for s in stats)
    exact = method is SearchMethod.EXACT
    win: list[float | None]
    if worlds:
        # the paired phase (or the exact worlds): every move on the same worlds
        mean = [v / weight for v in add("p_sum")]
        cross = [[sum(s["p_cross"][i][j] for s in stats) for j in range(n)] for i in range(n)]
        wmean = [v / weight for v in add("p_win")]
        cats = [[sum(s["p_cat"][i][c] for s in stats) / weight for c in range(len(CATEGORIES))]
                for i in range(n)]
        risk = [v / weight for v in add("p_risk")]
        samples = [worlds] * n

        def cov(i: int, j: int) -> float:
            """The worlds' (weighted) covariance of moves i and j; none when every
            world was solved (the exact average is the value, not an estimate)."""
            if worlds < 2 or (exact and reason is StopReason.EXACT):
                return 0.0
            return (cross[i][j] / weight - mean[i] * mean[j]) * worlds / (worlds - 1)

        se = [math.sqrt(max(cov(i, i), 0.0) / worlds) for i in range(n)]
        key = wmean if match_mode else mean
        best = max(range(n), key=lambda i: (key[i], mean[i], -i))
        if tiebreak:
            best = max(_equal_to_best(key, mean, best, slack), key=lambda i: (tb[i], -i))
        if pick == "visits":
            best = max(range(n), key=lambda i: (visits[i], key[i], -i))
        diff_se = [math.sqrt(max(cov(i, i) + cov(best, best) - 2 * cov(i, best), 0.0) / worlds)
                   for i in range(n)]
        win = list(wmean) if has_equity else [None] * n
    else:
        # the tree's own figures (a progress report before the paired phase)
        msum, sum2 = add("msum"), add("sum2")
        mean = [msum[i] / visits[i] if visits[i] else 0.0 for i in range(n)]
        var = [(sum2[i] - visits[i] * mean[i] ** 2) / (visits[i] - 1) if visits[i] > 1 else 0.0
               for i in range(n)]
        se = [math.sqrt(max(var[i], 0.0) / visits[i]) if visits[i] else math.inf for i in range(n)]
        catsum = [[sum(s["cat"][i][c] for s in stats) for c in range(len(CATEGORIES))] for i in range(n)]
        cats = [[v / visits[i] if visits[i] else 0.0 for v in catsum[i]] for i in range(n)]
        risk = [0.0] * n
        samples = visits
        wsum = add("win")
        win = [wsum[i] / visits[i] if visits[i] else 0.0 for i in range(n)] if has_equity else [None] * n
        best = max(range(n), key=lambda i: (visits[i], mean[i], -i))
        diff_se = [0.0 if i == best else math.sqrt(se[i] ** 2 + se[best] ** 2) for i in range(n)]
    out = [MoveStats(move=moves[i], expected_points=mean[i], expected_points_stderr=se[i],
                     diff_to_best=mean[i] - mean[best], diff_to_best_stderr=diff_se[i],
                     categories=dict(zip(CATEGORIES, cats[i], strict=False)), scopa_risk=risk[i], win_chance=win[i],
                     samples=samples[i]) for i in range(n)]
    if match_mode:
        order = sorted(range(n), key=lambda i: (i != best, -(win[i] or 0.0), -mean[i], -tb[i], i))
    else:
        order = sorted(range(n), key=lambda i: (i != best, -mean[i], -tb[i], i))
    info: SearchInfo = {"worlds": worlds, "nodes": sum(s["nodes"] for s in stats),
                        "tree_iterations": sum(s["iterations"] for s in stats),
                        "rejected": sum(s["rejected"] for s in stats)}
    return SearchResult(moves=tuple(out[i] for i in order), best=moves[best], iterations=playouts,
                        elapsed_ms=elapsed_ms, stopped_because=reason, cpu_ms=cpu_ms, method=method, threads=threads,
                        ranked_by=RankedBy.WIN_CHANCE if match_mode else RankedBy.EXPECTED_POINTS, info=info)
