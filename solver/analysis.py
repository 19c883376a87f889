"""Post-game analysis: every decision of a finished match judged,
the luck of every deal, and how the final score splits between them.

Three searches per decision, all on the replayed record:

* the **view** search: the seat's own SeatView at that moment (never
  hindsight), ranking every legal move. The played move's loss is the best
  move's expected hand margin minus the played move's, paired on the same
  worlds (``MoveStats.diff_to_best``), with its standard error; beside it the
  loss in match-winning chance where the search rates it (2 sides, a target).
* the **hindsight** search (double-dummy): the true world, every card
  visible, the stock's order included (``search.Knowledge.true_world``, the
  arena's cheating engine). Its best move is what perfect knowledge would have
  played; ``unavoidable_loss`` is the hindsight loss of the view's best move, what
  no one could have avoided.
* the **value** search: every dealt card visible, the stock unknown (sampled).
  It values positions the same for both sides, so it draws the evaluation
  graph and measures luck (2 sides only: with 3 or more sides a search rates
  only the asking side's margin, so luck and the graph are left out).

Judgement. A decision's *severity* is its loss in points (one scopa = 1
point) while the search ranks by points; near the target (or with a
cappotto in reach), where the search ranks by the chance of winning the
match, it is the drop in that chance divided by what one point is worth at
0-0 (``point_worth``: 1.9 % in a classic match to 51), so the grades there
follow the drop in winning chances as Lichess's do, and a point lost near the
end weighs about twice one lost early. A hand's margin has a standard
deviation of about 9 points, one scopa is 1:

    inaccuracy  severity >= 0.25     a quarter of a scopa
    mistake     severity >= 0.5
    blunder     severity >= 1.0      a scopa handed over or thrown away

and only if the severity is at least ``SIGNIFICANCE`` = 2 standard errors
(the search's paired standard error of the loss, scaled like the severity), so
the search's noise is never called an error. A forced move (one legal move) is
never an error. At the default budget a loss's standard error is about 0.02
to 0.1 points; the exact endgames (2 players, the last two rounds) have none.

Accuracy (0-100): a decision's accuracy is ``100 * 2 ** (-s / 0.5)`` where
``s`` is its severity if significant, else 0 (half a point lost halves it); a
player's accuracy is the mean over their unforced decisions. ``average_loss`` is
the mean points lost per unforced decision (backgammon's error rate).

Luck and the identity (2 sides; for side 0, side 1's figures are the
negatives). Let V(d) be the value search's expected margin for side 0 at
decision d (its best move's) and Q(d) the played move's. Each hand starts at
``start``: the mean hand margin of the dealer's side in the engine's own
self-play distribution (the dealer's seat is not luck). The value graph runs
from ``start`` to the hand's actual margin, and every step of it is one
event's, split into parts:

    luck (a deal)        = V(first decision after it) - the value before it
    play (a decision)    = -loss, the error graded from the mover's own view
                           (side 0's sign: side 1's errors count for side 0)
    hidden_luck          = (Q(d) - V(d)) - play: how the move turned out with
                           the cards the others really held, beside how the
                           mover could expect it to (a move that walks into a
                           hidden capture loses here, not in play)
    noise                = V(d + 1) - Q(d) between two decisions with no deal
                           between them, and the hand's actual margin - Q(last
                           decision): one position valued by two searches, the
                           evaluation's sampling noise (the last two rounds of
                           2 players are solved exactly, so none there)

and the final score margin = start + luck + hidden_luck + play + noise,
exactly, for the match and for every point of the graph (TimelinePoint). A
hand that the record leaves unfinished counts at its last value. ``rest``, the
one figure before hidden luck and noise were told apart, is their sum.

Why an error lost (``explain``): one or two sentences from the decision's own
figures (the loss, the scopa risks of both moves, the categories each gains),
and its ``kind`` (ErrorKind) read from the same figures, both by
cirulla.solver.reasons, which words the hints' reasons too. ``Decision.reason`` is
the English one, as the wire carries it; a page or a terminal explains the
decision again in its reader's language (``explain(d, translator("it"))``).
"""
from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Generator
from concurrent.futures import CancelledError, ThreadPoolExecutor
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import TYPE_CHECKING

from . import reasons
from ._equity import EquityTable
from .cards import Card
from .errors import StateError
from .events import Deal, Event, HandEnd, Turn
from .i18n import Translations
from .match import Match
from .moves import Move
from .reasons import Contrast, ErrorKind, move_words
from .rules import Rules
from .search import (
    DEFAULT_STOPPING,
    CancelToken,
    Knowledge,
    MoveStats,
    RankedBy,
    SearchBudget,
    SearchMethod,
    SearchParams,
    SearchResult,
    Tuning,
    dealer_edge,
    equity_table,
    run_search,
    search,
)
from .view import SeatView, stock_after

if TYPE_CHECKING:
    from ._core import CoreFields

__all__ = ["DEFAULT_ITERATIONS", "THRESHOLDS", "SIGNIFICANCE", "Decision", "DealLuck", "TimelinePoint",
           "Judgement", "JudgedBy", "PointKind", "ErrorKind", "HandPhase", "Position",
           "PlayerSummary", "SideSummary", "Summary", "analyze", "analyze_all", "grade",
           "decision_accuracy", "point_worth", "decision_count", "contrast", "category_gains", "error_kind",
           "explain", "move_words"]

DEFAULT_ITERATIONS = 30_000     # per search: about the search's default 100 ms on one core
DEFAULT_JOBS = 2                # decisions analysed at once (the search releases the GIL)
# The value search's knobs: every root move kept in the tree (root_floor), wider
# exploration and the tree followed as deep as it goes, so that one position
# valued by two searches (before and after a move) agrees better; and a forced
# move's position valued by the tree (solve_forced) rather than by a few
# playouts. Over 50 one-hand games at 8,000 iterations (bench_analysis.py
# --split 50) the mean size of the noise part fell from 2.82 to 1.72 points
# with the knobs, to 0.98 with solve_forced and to 0.88 with VALUE_FOCUS (0.55
# at the default 30,000 iterations). Tried and dropped: the same worlds for every value search
# of a hand (common random numbers), a larger paired phase, c_ucb 4 or 16, a
# floor of 0.5.
# follow_own 0: every seat follows the value search's tree to its end (the noise was measured so)
VALUE_KNOBS: SearchParams = {"root_floor": 0.25, "c_ucb": 8.0, "follow_min": 1, "follow_own": 0}
VALUE_FOCUS = 0.5               # the played move's share of the value search's tree (25 games: 0.96 -> 0.83)


class Judgement(StrEnum):
    """An error's grade (the module docstring has the thresholds)."""
    INACCURACY = "inaccuracy"
    MISTAKE = "mistake"
    BLUNDER = "blunder"


class JudgedBy(StrEnum):
    """What a decision's severity measures."""
    POINTS = "points"               # expected points of the hand lost
    WIN_CHANCE = "win_chance"       # the match-winning chance lost, in points at 0-0


class PointKind(StrEnum):
    """The event a point of the evaluation graph follows."""
    START = "start"                 # a hand's start: the dealer's edge
    DEAL = "deal"
    TURN = "turn"
    END = "end"                     # a hand's end: the actual score


class HandPhase(StrEnum):
    """The part of the hand a decision falls in."""
    FIRST_ROUND = "first_round"
    MIDDLE = "middle"
    LAST_TWO_ROUNDS = "last_two_rounds"     # 2 players: solved exactly


THRESHOLDS = ((Judgement.BLUNDER, 1.0), (Judgement.MISTAKE, 0.5), (Judgement.INACCURACY, 0.25))   # severity, points
SIGNIFICANCE = 2.0              # standard errors a loss needs to be judged
HALF_ACCURACY = 0.5             # the severity that halves a decision's accuracy


# --- results ----------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class Position:
    """What the deciding seat saw (cirulla.v1.DecisionPosition's fields)."""
    hand: tuple[Card, ...]          # the seat's own cards before the move
    table: tuple[Card, ...]
    unseen: tuple[Card, ...]        # the cards the seat has not seen: the others' hands and the stock
    scores: tuple[int, ...]         # match points by side before the hand
    hand_points: tuple[int, ...]    # points by side so far in the hand (scope and declarations)
    hand_sizes: tuple[int, ...]     # cards held, by seat

    @classmethod
    def of(cls, view: SeatView) -> Position:
        return cls(hand=view.hand, table=view.table, unseen=tuple(view.unseen()), scores=view.scores,
                   hand_points=tuple(a + b for a, b in zip(view.scope, view.declarations, strict=True)),
                   hand_sizes=view.hand_sizes)


@dataclass(frozen=True, kw_only=True)
class Decision:
    """One decision of one seat, judged from that seat's view at that moment.
    The fields are cirulla.v1.DecisionAnalysis's."""
    number: int                 # 0-based, in the match's order
    event_index: int            # index of its Turn in match.events
    hand: int
    round: int
    seat: int
    side: int
    legal_moves: int            # how many
    played: Move
    best: Move                  # the view search's recommendation
    expected_points: float      # expected hand margin of the played move (the seat's side)
    best_expected_points: float
    loss: float                 # points: best_expected_points - expected_points (paired)
    loss_stderr: float
    win_chance: float | None    # the seat's side's chance of winning the match after the played move
    best_win_chance: float | None
    win_chance_loss: float | None   # best_win_chance - win_chance
    judged_by: JudgedBy
    severity: float             # the loss graded (see the module docstring)
    severity_stderr: float
    judgement: Judgement | None # None: no error
    hindsight_best: Move        # the best move with every card visible
    hindsight_loss: float       # the played move's loss with every card visible
    unavoidable_loss: float     # the view's best move's loss with every card visible
    value_before: float | None  # the value search's expected margin for the seat's side, best move
    value_after: float | None   # ... after the played move
    luck: tuple[float, ...] | None = None   # by side: the deal(s) just before this decision
    method: SearchMethod        # the view search's
    position: Position
    phase: HandPhase
    played_scopa_risk: float    # the next player's chance to sweep after the move, from the seat's view
    best_scopa_risk: float
    played_categories: dict[str, float]     # expected_points by category (CATEGORIES)
    best_categories: dict[str, float]
    kind: ErrorKind | None = None           # for an error (judgement set)
    reason: str = ""                        # for an error: why it lost, in words (explain())

    @property
    def forced(self) -> bool:
        return self.legal_moves == 1

    @property
    def accuracy(self) -> float:
        return decision_accuracy(self)


@dataclass(frozen=True, kw_only=True)
class DealLuck:
    """How a deal (with a void deal before it, R-MONTE) moved side 0's expected margin."""
    event_index: int            # index of the deal in match.events
    hand: int
    round: int
    before: float
    after: float

    @property
    def luck(self) -> float:
        return self.after - self.before


@dataclass(frozen=True, kw_only=True)
class TimelinePoint:
    """A point of the evaluation graph: side 0's expected match margin (score
    difference before the hand plus the hand's expected margin) after an event,
    and side 0's parts of the step from the previous point (a START's step is
    the dealer's edge): margin - previous margin = luck + hidden_luck + play + noise."""
    event_index: int            # index in match.events (-1: the match's start)
    kind: PointKind
    hand: int
    margin: float
    decision: int | None = None # the decision of a TURN
    luck: float = 0.0           # a deal's (at a DEAL, or an END right after a deal)
    hidden_luck: float = 0.0    # a TURN's: how the move turned out with the cards the others held
    play: float = 0.0           # a TURN's: -loss from the mover's view (side 0's sign)
    noise: float = 0.0          # what is left: two evaluations of one position disagreeing


@dataclass(frozen=True, kw_only=True)
class PlayerSummary:
    seat: int
    name: str
    side: int
    decisions: int
    forced: int
    inaccuracies: int
    mistakes: int
    blunders: int
    loss: float                 # points lost in all (by the view search)
    average_loss: float         # per unforced decision
    accuracy: float             # 0-100
    hindsight_loss: float       # points lost had every card been visible
    unavoidable_loss: float     # of which no play from the seat's view could avoid


@dataclass(frozen=True, kw_only=True)
class SideSummary:
    """result = start + luck + hidden_luck + play + noise (the module docstring)."""
    side: int
    name: str
    result: float               # the side's points minus the other's over the match
    start: float
    luck: float
    play: float
    hidden_luck: float
    noise: float

    @property
    def rest(self) -> float:
        """hidden_luck + noise: the one figure before they were split."""
        return self.hidden_luck + self.noise


@dataclass(frozen=True, kw_only=True)
class Summary:
    """The fields are cirulla.v1.AnalysisSummary's."""
    players: tuple[PlayerSummary, ...]
    sides: tuple[SideSummary, ...]          # empty with 3 or more sides
    deals: tuple[DealLuck, ...]             # empty with 3 or more sides
    timeline: tuple[TimelinePoint, ...]     # empty with 3 or more sides
    decisions: int
    scores: tuple[int, ...]
    winner: int | None
    iterations: int
    seed: int
    elapsed_ms: float
    point_worth: float | None


# --- grading ------------------------------------------------------------------------

def grade(severity: float, stderr: float = 0.0) -> Judgement | None:
    """The judgement of a severity (points), or None: below the thresholds, or
    within SIGNIFICANCE standard errors of no loss."""
    if severity < SIGNIFICANCE * stderr:
        return None
    for name, threshold in THRESHOLDS:
        if severity >= threshold:
            return name
    return None


def decision_accuracy(d: Decision) -> float:
    """100 * 2 ** (-severity / 0.5) for a significant loss, else 100."""
    if d.forced or d.severity <= 0 or d.severity < SIGNIFICANCE * d.severity_stderr:
        return 100.0
    return 100.0 * math.pow(2.0, -d.severity / HALF_ACCURACY)


@lru_cache(maxsize=32)
def point_worth(rules: Rules) -> float | None:
    """What one point is worth in match-winning chance at 0-0 (mean over who
    deals), or None where the search rates no winning chance."""
    table = equity_table(rules)
    return None if table is None else _point_worth(table, rules)


def _point_worth(table: EquityTable, rules: Rules) -> float:
    # side 0's chance at 0-0 and at 1-0, with the seats 0 and 1 dealing the next hand
    at = [table.win0(a, b, rules.side_of(d)) for a, b in ((0, 0), (1, 0)) for d in (0, 1)]
    return max(((at[2] - at[0]) + (at[3] - at[1])) / 2, 1e-6)


def _worth_here(table: EquityTable, rules: Rules, scores: tuple[int, ...], dealer: int, side: int) -> float:
    """One more point for `side` now, in its chance of winning (next hand's dealer)."""
    nxt = rules.side_of((dealer + 1) % rules.players)
    up = list(scores)
    up[side] += 1
    return abs(table.win0(up[0], up[1], nxt) - table.win0(scores[0], scores[1], nxt))


# --- the positions of a record --------------------------------------------------

@dataclass(frozen=True)
class _Position:
    number: int
    event: int
    hand: int
    round: int
    seat: int
    played: Move
    view: SeatView
    world: Knowledge            # the true world, the stock in its real order
    scores: tuple[int, ...]
    dealer: int


def decision_count(match: Match) -> int:
    return sum(isinstance(e, Turn) for e in match.events)


def _positions(match: Match) -> list[_Position]:
    """Replay the match's events, keeping what each decision needs."""
    r = match.rules
    replay = Match(r, dealer=match.first_dealer, manual_deal=True, names=match.names)
    events = match.events
    out: list[_Position] = []
    for i, e in enumerate(events):
        if isinstance(e, Deal):
            replay.deal(e.hands, e.table)
        elif isinstance(e, Turn):
            if replay.to_move != e.seat:
                raise StateError(f"event {i}: seat {e.seat} plays, but it is seat {replay.to_move}'s turn")
            world = Knowledge.true_world(replay, e.seat)
            base = world.base.copy()
            base["stock"] = _true_stock(base, r, events, i)
            out.append(_Position(len(out), i, replay.hand_number, replay.round, e.seat, e.move,
                                 replay.view(e.seat), dataclasses.replace(world, base=base),
                                 tuple(replay.scores), replay.dealer))
            replay.play(e.move)
    return out


def _true_stock(base: CoreFields, rules: Rules, events: list[Event], i: int) -> list[int]:
    """The core's stock with the rest of this hand's deals in their real order
    (a manual-deal replay only knows the cards dealt so far)."""
    stock, pos = list(base["stock"]), base["stock_pos"]
    future: list[int] = []
    for e in events[i + 1:]:
        if isinstance(e, HandEnd) or (isinstance(e, Deal) and e.round == 0):
            break
        if isinstance(e, Deal):
            n = rules.players
            future += [c.index for k in range(n) for c in e.hands[(e.dealer + 1 + k) % n]]
    taken = set(future)
    return stock[:pos] + future + [c for c in stock[pos:] if c not in taken]


# --- one decision ------------------------------------------------------------------

def _mix(seed: int, number: int, kind: int) -> int:
    x = (seed * 0x9E3779B97F4A7C15 + number * 0xBF58476D1CE4E5B9 + kind * 0x94D049BB133111EB) % 2**64
    return (x ^ (x >> 31)) % 2**63


def _stats(result: SearchResult, move: Move) -> MoveStats:
    for s in result.moves:
        if s.move == move:
            return s
    raise StateError(f"the search did not rank the played move {move}")


def _analyse(p: _Position, *, iterations: int, seed: int, cancel: CancelToken,
             values: bool) -> Decision:
    r = p.view.rules
    side = r.side_of(p.seat)
    # the view's and the hindsight's rankings stop once settled (the default budget's rule, capped at
    # `iterations`): a plain decision's loss is plain long before the cap, a close one gets all of it
    view = search(p.view, SearchBudget(iterations=iterations, seed=_mix(seed, p.number, 1), cancel=cancel,
                                       stopping=DEFAULT_STOPPING))
    played, best = _stats(view, p.played), view.moves[0]
    legal = len(view.moves)
    loss, loss_se = 0.0 - played.diff_to_best, played.diff_to_best_stderr      # 0.0 -: no -0.0
    win_loss = None if best.win_chance is None or played.win_chance is None \
        else best.win_chance - played.win_chance
    judged_by, severity, se = JudgedBy.POINTS, loss, loss_se
    table = equity_table(r)                 # None: the search rates no winning chance
    if view.ranked_by is RankedBy.WIN_CHANCE and win_loss is not None and table is not None:
        # the drop in winning chance in points at 0-0; its standard error from
        # the points' one, at what a point is worth here
        judged_by = JudgedBy.WIN_CHANCE
        worth = _point_worth(table, r)
        severity = win_loss / worth
        se = loss_se * _worth_here(table, r, p.scores, p.dealer, side) / worth
    if legal == 1:
        severity, se, loss, loss_se = 0.0, 0.0, 0.0, 0.0
    judgement = grade(severity, se) if legal > 1 else None
    # hindsight: the true world, ranked by points
    if legal == 1:
        hind_best, hind_loss, unavoidable = played.move, 0.0, 0.0
    else:
        hind = run_search(p.world, SearchBudget(iterations=iterations, seed=_mix(seed, p.number, 2), cancel=cancel,
                                                stopping=DEFAULT_STOPPING))
        hind_best = hind.best
        hind_loss = 0.0 - _stats(hind, p.played).diff_to_best
        unavoidable = 0.0 - _stats(hind, best.move).diff_to_best
    before = after = None
    if values:
        stock = p.world.base["stock"][p.world.base["stock_pos"]:]
        know = dataclasses.replace(p.world, fixed=False, unseen=tuple(stock))
        value = run_search(know, SearchBudget(iterations=iterations, seed=_mix(seed, p.number, 3), cancel=cancel),
                           Tuning(solve_forced=True, focus=p.played, focus_share=VALUE_FOCUS, knobs=VALUE_KNOBS))
        before, after = value.moves[0].expected_points, _stats(value, p.played).expected_points
    d = Decision(
        number=p.number, event_index=p.event, hand=p.hand, round=p.round, seat=p.seat, side=side,
        legal_moves=legal, played=p.played, best=best.move, expected_points=played.expected_points,
        best_expected_points=best.expected_points, loss=loss, loss_stderr=loss_se,
        win_chance=played.win_chance, best_win_chance=best.win_chance, win_chance_loss=win_loss,
        judged_by=judged_by, severity=severity, severity_stderr=se, judgement=judgement,
        hindsight_best=hind_best, hindsight_loss=hind_loss, unavoidable_loss=unavoidable,
        value_before=before, value_after=after, method=view.method,
        position=Position.of(p.view), phase=hand_phase(r, p.round),
        played_scopa_risk=played.scopa_risk, best_scopa_risk=best.scopa_risk,
        played_categories=dict(played.categories), best_categories=dict(best.categories))
    if judgement is None:
        return d
    return dataclasses.replace(d, kind=error_kind(d), reason=explain(d))


# --- what an error did, in words (cirulla.solver.reasons) ---------------------------------

def hand_phase(rules: Rules, rnd: int) -> HandPhase:
    """The first round, the last two (the stock is empty once the next one is
    dealt), or the middle; the first round wins in hands of one or two rounds."""
    if rnd == 0:
        return HandPhase.FIRST_ROUND
    return HandPhase.LAST_TWO_ROUNDS if stock_after(rules, rnd + 1) <= 0 else HandPhase.MIDDLE


def contrast(d: Decision) -> Contrast:
    """The played move against the best, with their figures: what a reason compares."""
    win = None
    if d.judged_by is JudgedBy.WIN_CHANCE and d.win_chance_loss is not None:
        win = 0.0 - d.win_chance_loss
    return Contrast(table=d.position.table, move=d.played, other=d.best, points=0.0 - d.loss,
                    scopa_risk=d.played_scopa_risk, other_scopa_risk=d.best_scopa_risk,
                    categories=d.played_categories, other_categories=d.best_categories, win_chance=win)


def category_gains(d: Decision) -> dict[str, float]:
    """By category, what the best move gains over the played one (the seat's side)."""
    return contrast(d).gains()


def error_kind(d: Decision) -> ErrorKind:
    """What an error did: the first of ErrorKind's kinds that its figures fit."""
    return reasons.error_kind(contrast(d))


def explain(d: Decision, tr: Translations | None = None) -> str:
    """One or two plain sentences on why an error lost: what the played move
    did, then what the best move gains and where, in the language of `tr`
    (English by default). Every figure is one of the decision's own (loss,
    scopa risks, category_gains), as the report shows them (reasons.error_reason)."""
    return reasons.error_reason(contrast(d), d.kind, tr)


# --- the whole match ---------------------------------------------------------------

def analyze(match: Match, *, iterations: int = DEFAULT_ITERATIONS, seed: int = 0,
            jobs: int = DEFAULT_JOBS, cancel: CancelToken | None = None) -> Generator[Decision | Summary, None, None]:
    """Analyse every decision of a match (replayed from its events), yielding
    each Decision in the match's order as soon as it is ready, then the Summary.

    `jobs` decisions are searched at once, each search on one thread with a
    seed drawn from `seed` and the decision's number, so the results do not
    depend on `jobs`. Closing the generator cancels the searches in flight.

    :raises StateError: for a bad budget or events the rules reject.
    """
    if not isinstance(iterations, int) or iterations < 1:
        raise StateError(f"analysis: iterations must be a positive integer, got {iterations!r}")
    if not isinstance(jobs, int) or jobs < 1:
        raise StateError(f"analysis: jobs must be a positive integer, got {jobs!r}")
    start = time.monotonic()
    positions = _positions(match)
    values = match.rules.n_sides == 2
    cancel = cancel or CancelToken()
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="cirulla-analysis")
    done: list[Decision] = []
    try:
        futures = [pool.submit(_analyse, p, iterations=iterations, seed=seed, cancel=cancel,
                               values=values) for p in positions]
        for p, f in zip(positions, futures, strict=False):
            d = f.result()
            if cancel.cancelled:
                return
            if values:
                d = dataclasses.replace(d, luck=_luck_before(match, positions, done, p, d))
            done.append(d)
            yield d
    except BaseException:
        cancel.cancel()                     # closed early, or failed: stop the searches in flight
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    yield _summary(match, done, iterations=iterations, seed=seed,
                   elapsed_ms=(time.monotonic() - start) * 1000.0)


def analyze_all(match: Match, *, iterations: int = DEFAULT_ITERATIONS, seed: int = 0,
                jobs: int = DEFAULT_JOBS, cancel: CancelToken | None = None) -> tuple[list[Decision], Summary]:
    """analyze() collected: the decisions and the summary.

    :raises CancelledError: if `cancel` stopped the analysis before its summary.
    """
    decisions: list[Decision] = []
    for item in analyze(match, iterations=iterations, seed=seed, jobs=jobs, cancel=cancel):
        if isinstance(item, Summary):
            return decisions, item
        decisions.append(item)
    raise CancelledError("the analysis was cancelled before its summary")


def _side0(d: Decision, value: float) -> float:
    return value if d.side == 0 else -value


def _values0(d: Decision) -> tuple[float, float]:
    """The value search's margins before and after d's move, for side 0."""
    if d.value_before is None or d.value_after is None:
        raise StateError(f"decision {d.number} has no value search (it runs with 2 sides)")
    return _side0(d, d.value_before), _side0(d, d.value_after)


def _hand_start(rules: Rules, dealer: int) -> float:
    """Side 0's mean hand margin when `dealer` deals (search.dealer_edge)."""
    edge = dealer_edge(rules)
    return edge if rules.side_of(dealer) == 0 else -edge


def _luck_before(match: Match, positions: list[_Position], done: list[Decision], p: _Position,
                 d: Decision) -> tuple[float, float] | None:
    """The luck of the deal(s) between the previous decision and this one."""
    events = match.events
    prev = done[-1] if done else None
    lo = prev.event_index + 1 if prev else 0
    if not any(isinstance(e, Deal) for e in events[lo:d.event_index]):
        return None
    if prev is None or prev.hand != d.hand:
        before = _hand_start(match.rules, p.dealer)
    else:
        _, before = _values0(prev)
    luck = _values0(d)[0] - before
    return (luck, -luck)


def _summary(match: Match, decisions: list[Decision], *, iterations: int, seed: int,
             elapsed_ms: float) -> Summary:
    r = match.rules
    players = []
    for seat in range(r.players):
        mine = [d for d in decisions if d.seat == seat]
        free = [d for d in mine if not d.forced]
        count = {g: sum(d.judgement == g for d in free) for g, _ in THRESHOLDS}
        players.append(PlayerSummary(
            seat=seat, name=match.names[seat], side=r.side_of(seat), decisions=len(mine),
            forced=len(mine) - len(free), inaccuracies=count[Judgement.INACCURACY],
            mistakes=count[Judgement.MISTAKE], blunders=count[Judgement.BLUNDER], loss=sum(d.loss for d in free),
            average_loss=sum(max(d.loss, 0.0) for d in free) / len(free) if free else 0.0,
            accuracy=sum(d.accuracy for d in free) / len(free) if free else 100.0,
            hindsight_loss=sum(d.hindsight_loss for d in free),
            unavoidable_loss=sum(d.unavoidable_loss for d in free)))
    sides: tuple[SideSummary, ...] = ()
    deals: tuple[DealLuck, ...] = ()
    timeline: tuple[TimelinePoint, ...] = ()
    if r.n_sides == 2:
        sides, deals, timeline = _ledger(match, decisions)
    return Summary(players=tuple(players), sides=sides, deals=deals, timeline=timeline,
                   decisions=len(decisions), scores=tuple(match.scores), winner=match.winner,
                   iterations=iterations, seed=seed, elapsed_ms=elapsed_ms, point_worth=point_worth(r))


def _ledger(match: Match, decisions: list[Decision]) -> tuple[
        tuple[SideSummary, ...], tuple[DealLuck, ...], tuple[TimelinePoint, ...]]:
    """Side 0's value graph over the match, the luck of every deal, and the
    split of the result into start + luck + hidden_luck + play + noise, event
    by event (module docstring)."""
    r, events = match.rules, match.events
    by_event = {d.event_index: d for d in decisions}
    names = match.side_names
    total = {"start": 0.0, "luck": 0.0, "hidden_luck": 0.0, "play": 0.0, "noise": 0.0}
    base = 0.0                  # side 0's match margin before the hand
    timeline: list[TimelinePoint] = []
    deals: list[DealLuck] = []
    in_hand = False             # a hand has started and not ended
    value = 0.0                 # side 0's expected hand margin now (in a hand)
    pending_deal: int | None = None

    def point(i: int, kind: PointKind, hand: int, start: float = 0.0, luck: float = 0.0,
              hidden_luck: float = 0.0, play: float = 0.0, noise: float = 0.0) -> None:
        for k, v in (("start", start), ("luck", luck), ("hidden_luck", hidden_luck), ("play", play),
                     ("noise", noise)):
            total[k] += v
        timeline.append(TimelinePoint(event_index=i, kind=kind, hand=hand, margin=base + value, luck=luck,
                                      hidden_luck=hidden_luck, play=play, noise=noise))

    hand = 0
    for i, e in enumerate(events):
        if isinstance(e, Deal):
            if e.round == 0 and (not in_hand or e.hand != hand):
                hand, in_hand = e.hand, True
                value = _hand_start(r, e.dealer)
                point(i, PointKind.START, hand, start=value)
            pending_deal = i                    # its luck shows at the next decision
        elif isinstance(e, Turn):
            d = by_event[i]
            v_before, v_after = _values0(d)
            noise = 0.0
            if pending_deal is not None:
                deals.append(DealLuck(event_index=pending_deal, hand=d.hand, round=d.round,
                                      before=value, after=v_before))
                luck, value = v_before - value, v_before
                point(pending_deal, PointKind.DEAL, d.hand, luck=luck)
                pending_deal = None
            else:
                noise = v_before - value        # the same position valued twice
            play = _side0(d, -d.loss)           # the error, graded from the mover's view
            hidden = (v_after - v_before) - play    # the value search's view of the move, less that
            value = v_after
            point(i, PointKind.TURN, d.hand, play=play, hidden_luck=hidden, noise=noise)
            timeline[-1] = dataclasses.replace(timeline[-1], decision=d.number)
        elif isinstance(e, HandEnd):
            actual = e.sides[0].total - e.sides[1].total
            step, value = actual - value, actual
            if pending_deal is not None:        # R-CAPOTUN or a deal with no move after it
                point(i, PointKind.END, e.hand, luck=step)
            else:
                point(i, PointKind.END, e.hand, noise=step)
            base, value = base + actual, 0.0
            in_hand, pending_deal = False, None
    result = base + (value if in_hand else 0.0)    # an unfinished hand counts at its last value
    mine = SideSummary(side=0, name=names[0], result=result, **total)
    theirs = SideSummary(side=1, name=names[1], result=0.0 - result,
                         **{k: 0.0 - v for k, v in total.items()})
    return (mine, theirs), tuple(deals), tuple(timeline)
