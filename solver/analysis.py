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
self-play distribution (the dealer's seat is not luck). Then:

    luck of the deal(s) before d  = V(d) - Q(previous decision of the round)
                                    (at a hand's first deal: V(d) - start)
    play (what errors did)        = sum over decisions of -loss for side 0's
                                    seats, +loss for side 1's
    rest                          = what the hidden cards and the evaluator's
                                    noise did: the value search's own swings
                                    Q(d) - V(d) less the play term, the gaps
                                    V(d+1) - Q(d) between decisions, and the
                                    hand's actual margin - Q(last decision)

and the final score margin = start + luck + play + rest, exactly: every term
is one step of the value graph, which runs from ``start`` to the actual hand
margin in each hand. A hand that the record leaves unfinished counts at its
last value.
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

from ._equity import EquityTable
from .errors import StateError
from .events import Deal, Event, HandEnd, Turn
from .match import Match
from .moves import Move
from .rules import Rules
from .search import (
    CancelToken,
    Knowledge,
    MoveStats,
    RankedBy,
    SearchMethod,
    SearchResult,
    dealer_edge,
    equity_table,
    run_search,
    search,
)
from .view import SeatView

if TYPE_CHECKING:
    from ._core import CoreFields

__all__ = ["DEFAULT_ITERATIONS", "THRESHOLDS", "SIGNIFICANCE", "Decision", "DealLuck", "TimelinePoint",
           "Judgement", "JudgedBy", "PointKind",
           "PlayerSummary", "SideSummary", "Summary", "analyze", "analyze_all", "grade",
           "decision_accuracy", "point_worth", "decision_count"]

DEFAULT_ITERATIONS = 30_000     # per search: about the search's default 100 ms on one core
DEFAULT_JOBS = 2                # decisions analysed at once (the search releases the GIL)


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


THRESHOLDS = ((Judgement.BLUNDER, 1.0), (Judgement.MISTAKE, 0.5), (Judgement.INACCURACY, 0.25))   # severity, points
SIGNIFICANCE = 2.0              # standard errors a loss needs to be judged
HALF_ACCURACY = 0.5             # the severity that halves a decision's accuracy


# --- results ----------------------------------------------------------------------

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
    difference before the hand plus the hand's expected margin) after an event."""
    event_index: int            # index in match.events (-1: the match's start)
    kind: PointKind
    hand: int
    margin: float
    decision: int | None = None # the decision of a TURN


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
    """result = start + luck + play + rest (see the module docstring)."""
    side: int
    name: str
    result: float               # the side's points minus the other's over the match
    start: float
    luck: float
    play: float
    rest: float


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
    view = search(p.view, iterations=iterations, seed=_mix(seed, p.number, 1), cancel=cancel)
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
        hind = run_search(p.world, iterations=iterations, seed=_mix(seed, p.number, 2), cancel=cancel)
        hind_best = hind.best
        hind_loss = 0.0 - _stats(hind, p.played).diff_to_best
        unavoidable = 0.0 - _stats(hind, best.move).diff_to_best
    before = after = None
    if values:
        stock = p.world.base["stock"][p.world.base["stock_pos"]:]
        know = dataclasses.replace(p.world, fixed=False, unseen=tuple(stock))
        value = run_search(know, iterations=iterations, seed=_mix(seed, p.number, 3), cancel=cancel)
        before, after = value.moves[0].expected_points, _stats(value, p.played).expected_points
    return Decision(
        number=p.number, event_index=p.event, hand=p.hand, round=p.round, seat=p.seat, side=side,
        legal_moves=legal, played=p.played, best=best.move, expected_points=played.expected_points,
        best_expected_points=best.expected_points, loss=loss, loss_stderr=loss_se,
        win_chance=played.win_chance, best_win_chance=best.win_chance, win_chance_loss=win_loss,
        judged_by=judged_by, severity=severity, severity_stderr=se, judgement=judgement,
        hindsight_best=hind_best, hindsight_loss=hind_loss, unavoidable_loss=unavoidable,
        value_before=before, value_after=after, method=view.method)


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
    split of the result into start + luck + play + rest (module docstring)."""
    r, events = match.rules, match.events
    by_event = {d.event_index: d for d in decisions}
    names = match.side_names
    start = luck = play = rest = 0.0
    base = 0.0                  # side 0's match margin before the hand
    timeline: list[TimelinePoint] = []
    deals: list[DealLuck] = []
    in_hand = False             # a hand has started and not ended
    value = 0.0                 # side 0's expected hand margin now (in a hand)
    pending_deal: int | None = None
    hand = 0
    for i, e in enumerate(events):
        if isinstance(e, Deal):
            if e.round == 0 and (not in_hand or e.hand != hand):
                hand, in_hand = e.hand, True
                value = _hand_start(r, e.dealer)
                start += value
                timeline.append(TimelinePoint(event_index=i, kind=PointKind.START, hand=hand, margin=base + value))
            pending_deal = i                    # its luck shows at the next decision
        elif isinstance(e, Turn):
            d = by_event[i]
            v_before, v_after = _values0(d)
            if pending_deal is not None:
                deals.append(DealLuck(event_index=pending_deal, hand=d.hand, round=d.round,
                                      before=value, after=v_before))
                luck += v_before - value
                timeline.append(TimelinePoint(event_index=pending_deal, kind=PointKind.DEAL, hand=d.hand,
                                              margin=base + v_before))
                pending_deal = None
            else:
                rest += v_before - value        # a gap: the same position, valued twice
            swing = v_after - v_before          # the value search's view of the move
            mine = _side0(d, -d.loss)           # the view search's, counted as play
            play += mine
            rest += swing - mine
            value = v_after
            timeline.append(TimelinePoint(event_index=i, kind=PointKind.TURN, hand=d.hand, margin=base + value,
                                          decision=d.number))
        elif isinstance(e, HandEnd):
            actual = e.sides[0].total - e.sides[1].total
            if pending_deal is not None:        # R-CAPOTUN or a deal with no move after it
                luck += actual - value
            else:
                rest += actual - value
            base += actual
            in_hand, pending_deal = False, None
            timeline.append(TimelinePoint(event_index=i, kind=PointKind.END, hand=e.hand, margin=base))
    if in_hand:                                 # an unfinished hand counts at its last value
        base += value
    result = base
    sides = (SideSummary(side=0, name=names[0], result=result, start=start, luck=luck, play=play, rest=rest),
             SideSummary(side=1, name=names[1], result=0.0 - result, start=0.0 - start, luck=0.0 - luck,
                         play=0.0 - play, rest=0.0 - rest))
    return sides, tuple(deals), tuple(timeline)
