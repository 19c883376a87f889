"""Puzzles cut from real games: positions where one move is clearly best.

A position becomes a puzzle when the seat has MIN_MOVES legal moves at least
and three searches of its view at the default budget (without its time cap and
seeded by the position, so that the same position gives the same answer on
any machine: ``puzzle_budget``, ``position_seed``) each find the same move
ahead of every other legal move by at least ``MIN_LEAD`` points of expected
hand margin and, unless the search was exact, by at least ``LEAD_Z``
standard errors of that move's paired difference (``clear_lead``). One
search is not enough: its standard errors measure the sampled worlds, not
the tree it grew, and a search that settles early on a small tree can be
sure of a move that another seed's tree ranks second (one search alone cut
263 puzzles from the tests' 100 games, and another seed ranked 3 of them
otherwise); two that agreed were what a third found again (the 237 puzzles
they cut, searched again with three other seeds: no move ranked otherwise),
until the rollouts trusted the other seat's moves less (2026-12-02): then
one of the puzzles two searches cut was ranked otherwise by a new search
(the naming of the matta in a declaration), so three must agree
(CONFIRMING_SEARCHES; the 222 puzzles they cut, searched again with three
other seeds: no move ranked otherwise).
The puzzle's figures are the first search's.
Positions ranked by the chance of winning the match (near the target) are
left out: a puzzle is about the points of the hand.

Its theme is read from the figures of the solution and of the closest other
move (the runner-up), the first that fits (a position that fits none is no
puzzle: a lead made of a little on every count teaches nothing in a line):

    declaration     the solution declares and so does the runner-up (which
                    declaration, R-DECL-*), or the runner-up declares and the
                    solution does not (declaring a holding rather than not
                    is no question: no puzzle)
    scopa           the solution sweeps the table, and the sweep scores (R-SCOPA)
    sweep_avoided   the runner-up leaves the next player a sweep at least
                    SWEEP_GAP more often, and the scope are SCOPE_SHARE of
                    what the solution gains at least
    settebello      the solution takes the 7 of diamonds, or gains most on it
    primiera        the solution gains most on primiera
    diamonds        ... on diamonds
    last_capture    the last round (stock empty), the solution gaining most on
                    cards: the hand's last capture takes the leftovers
                    (R-LEFTOVER)

Its difficulty (1 easy .. 5 hard) grows with the other moves that look
plausible (up to 2 steps: those within ``PLAUSIBLE`` points of the solution,
and the greedy policy's move if it is not the solution, what a player who
looks no further than the cards won now would play) and as the lead shrinks
(under 1.5 points one step, under 0.75 two).

The reasons are the analysis's (``reasons.error_reason``, as
``analysis.explain`` writes them): each other move is explained as an error
against the solution, from the two moves' own figures; the puzzle's own
reason is the runner-up's.

>>> from cirulla.solver.moves import Move
>>> Move.parse("5D x 3C 2S") == Move.parse("5d x 2♠ 3♣")     # an answer's cards in any order
True
"""
from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from enum import StrEnum

from .cards import Card
from .events import CATEGORIES
from .i18n import Translations, language_of, translator
from .moves import Move
from .reasons import Contrast, error_reason
from .search import DEFAULT_BUDGET, MoveStats, RankedBy, SearchBudget, SearchMethod, SearchResult, search
from .view import SeatView

__all__ = ["MIN_MOVES", "MIN_LEAD", "LEAD_Z", "PLAUSIBLE", "Theme", "Puzzle", "PuzzleMove", "PuzzleSource",
           "position_id", "position_seed", "puzzle_budget", "search_position", "clear_lead", "theme_of",
           "difficulty_of", "reason_against", "find", "cut"]

MIN_MOVES = 3                   # legal moves: a choice, not a coin toss
MIN_LEAD = 0.5                  # points: half a scopa at least between the solution and every other move
LEAD_Z = 4.0                    # ... and this many of that move's standard errors (sampled searches)
CONFIRMING_SEARCHES = 2         # searches with other seeds that must find the same move clearly best
PLAUSIBLE = 1.0                 # points: another move this close to the solution looks plausible
SWEEP_GAP = 0.25                # the runner-up's chance of leaving a sweep, above the solution's
SCOPE_SHARE = 0.4               # the scope's share of the solution's gains, for sweep_avoided
SETTEBELLO = Card.parse("7D")
RACES = ("settebello", "primiera", "diamonds", "cards")


class Theme(StrEnum):
    """What a puzzle is about (cirulla.v1.PuzzleTheme; the module docstring has the rules)."""
    DECLARATION = "declaration"
    SCOPA = "scopa"
    SWEEP_AVOIDED = "sweep_avoided"
    SETTEBELLO = "settebello"
    PRIMIERA = "primiera"
    DIAMONDS = "diamonds"
    LAST_CAPTURE = "last_capture"


@dataclass(frozen=True, kw_only=True)
class PuzzleMove:
    """A legal move other than the solution (cirulla.v1.PuzzleMove)."""
    move: Move
    loss: float                 # points given up against the solution (paired)
    loss_stderr: float          # 0 when exact
    reason: str                 # why it is worse, in the puzzle's language


@dataclass(frozen=True, kw_only=True)
class PuzzleSource:
    """The game and decision a puzzle was cut from (cirulla.v1.PuzzleSource)."""
    game_id: str
    record: str                 # the record's file (and :line), as the analysis names it
    decision: int
    event_index: int
    player: str
    played: Move


@dataclass(frozen=True, kw_only=True)
class Puzzle:
    """A position with one clearly best move (cirulla.v1.Puzzle)."""
    id: str                     # position_id(view)
    view: SeatView
    solution: Move
    others: tuple[PuzzleMove, ...]      # the closest to the solution first
    theme: Theme
    difficulty: int             # 1..5
    reason: str                 # why the solution is best, against the runner-up
    language: str               # of the reasons
    source: PuzzleSource
    expected_points: float      # the solution's
    lead: float                 # over the runner-up
    lead_stderr: float
    method: SearchMethod

    def is_solution(self, answer: Move | str) -> bool:
        """Whether `answer` (a Move, or its text: any card order, case or suit symbols)
        names the solution.

        :raises InvalidMoveError: if the text is no move.
        """
        return Move.of(answer, matta=self.view.rules.matta_card) == self.solution

    def other(self, answer: Move | str) -> PuzzleMove | None:
        """The other legal move `answer` names, with why it is worse; None for the
        solution or a move that is not legal here."""
        move = Move.of(answer, matta=self.view.rules.matta_card)
        return next((m for m in self.others if m.move == move), None)


# --- the position --------------------------------------------------------------------

def position_id(view: SeatView) -> str:
    """The position's identity: the hex SHA-256 of the view without its history
    and hand number (the same cards, counts and scores reached another way are
    the same position)."""
    key = dataclasses.replace(view, history=(), hand_number=0)
    return hashlib.sha256(repr(key).encode("utf-8")).hexdigest()


def position_seed(pid: str, seed: int = 0) -> int:
    """A search seed of the position (position_id), shifted by `seed`: the same
    position is searched the same way whatever game or order it comes in."""
    return (int(pid[:15], 16) + seed) % 2**63


def _confirming_seed(seed: int) -> int:
    """The second search's seed: one step of a 64-bit LCG, not a neighbour of the first."""
    return (seed * 6364136223846793005 + 1442695040888963407) % 2**63


def puzzle_budget(seed: int) -> SearchBudget:
    """The default budget (its iterations and stopping rule) without its time
    cap: reproducible, however busy the machine."""
    return DEFAULT_BUDGET.replace(time_ms=None, seed=seed)


def search_position(view: SeatView, seed: int = 0) -> SearchResult:
    """One search of a puzzle's position (find runs two)."""
    return search(view, puzzle_budget(seed))


# --- the figures ---------------------------------------------------------------------

def _others(result: SearchResult) -> list[MoveStats]:
    """Every move but the best, the closest first."""
    return sorted(result.moves[1:], key=lambda m: -m.diff_to_best)


def clear_lead(result: SearchResult) -> bool:
    """Whether the search's best move is clearly best (the module docstring)."""
    if result.ranked_by is not RankedBy.EXPECTED_POINTS or len(result.moves) < MIN_MOVES:
        return False
    if result.method not in (SearchMethod.ISMCTS, SearchMethod.EXACT):      # not FORCED
        return False
    for m in result.moves[1:]:
        lead = -m.diff_to_best
        if lead < MIN_LEAD:
            return False
        if result.method is not SearchMethod.EXACT and lead < LEAD_Z * m.diff_to_best_stderr:
            return False
    return True


def _sweeps(view: SeatView, move: Move) -> bool:
    return bool(move.captured) and set(move.captured) == set(view.table)


def theme_of(view: SeatView, result: SearchResult) -> Theme | None:
    """The puzzle's theme, from the solution's and the runner-up's figures (None: none fits)."""
    best, runner = result.moves[0], _others(result)[0]
    gains = {c: best.categories.get(c, 0.0) - runner.categories.get(c, 0.0) for c in CATEGORIES}
    positive = sum(g for g in gains.values() if g > 0)
    if best.move.is_declaration and not runner.move.is_declaration:
        return None                 # declaring a holding rather than not: no question
    if best.move.is_declaration or runner.move.is_declaration:
        return Theme.DECLARATION
    if _sweeps(view, best.move) and gains.get("scope", 0.0) >= 0.5:
        return Theme.SCOPA
    if runner.scopa_risk - best.scopa_risk >= SWEEP_GAP and gains.get("scope", 0.0) >= SCOPE_SHARE * positive:
        return Theme.SWEEP_AVOIDED
    top = max(RACES, key=lambda c: gains.get(c, 0.0))
    if SETTEBELLO in best.move.captured and gains.get("settebello", 0.0) > 0:
        return Theme.SETTEBELLO
    if gains.get(top, 0.0) <= 0:
        return None
    if top == "settebello":
        return Theme.SETTEBELLO
    if top == "primiera":
        return Theme.PRIMIERA
    if top == "diamonds":
        return Theme.DIAMONDS
    if view.stock_size == 0:
        return Theme.LAST_CAPTURE
    return None


def difficulty_of(result: SearchResult, greedy: Move | None = None) -> int:
    """1 (easy) .. 5 (hard): the other moves that look plausible (those close to
    the best, and `greedy`, the greedy policy's move) and the lead (the module
    docstring)."""
    best = result.moves[0].move
    plausible = {m.move for m in result.moves[1:] if -m.diff_to_best < PLAUSIBLE}
    if greedy is not None and greedy != best:
        plausible.add(greedy)
    lead = min(-m.diff_to_best for m in result.moves[1:])
    return 1 + min(len(plausible), 2) + (2 if lead < 0.75 else 1 if lead < 1.5 else 0)


def reason_against(view: SeatView, result: SearchResult, other: MoveStats, tr: Translations | None = None) -> str:
    """Why the search's best move beats `other`, in the language of `tr`: the
    analysis's reason for `other` played instead of it (reasons.error_reason)."""
    contrast = Contrast.of(view.table, other, result.moves[0], points=other.diff_to_best, by_win=False)
    return error_reason(contrast, tr=tr)


def find(view: SeatView, *, source: PuzzleSource, seed: int = 0,
         tr: Translations | None = None) -> Puzzle | None:
    """The puzzle of the position `view` shows its seat to move, or None: three
    searches seeded by the position (and `seed`) must find the same move
    clearly best, and a theme must fit (the module docstring)."""
    first_seed = position_seed(position_id(view), seed)
    first = search_position(view, first_seed)
    if not clear_lead(first) or theme_of(view, first) is None:
        return None
    seed_again = first_seed
    for _ in range(CONFIRMING_SEARCHES):
        seed_again = _confirming_seed(seed_again)
        again = search_position(view, seed_again)
        if not clear_lead(again) or again.best != first.best:
            return None
    return cut(view, first, source=source, tr=tr)


def cut(view: SeatView, result: SearchResult, *, source: PuzzleSource,
        tr: Translations | None = None) -> Puzzle | None:
    """The puzzle a search's result makes of a position, or None if no move is
    clearly best there or no theme fits (find confirms it by a second search).
    Reasons in the language of `tr` (English by default)."""
    theme = theme_of(view, result) if clear_lead(result) else None
    if theme is None:
        return None
    tr = tr or translator()
    best, others = result.moves[0], _others(result)
    moves = tuple(PuzzleMove(move=m.move, loss=0.0 - m.diff_to_best, loss_stderr=m.diff_to_best_stderr,
                             reason=reason_against(view, result, m, tr)) for m in others)
    return Puzzle(id=position_id(view), view=view, solution=best.move, others=moves, theme=theme,
                  difficulty=difficulty_of(result, view.greedy_move()), reason=moves[0].reason,
                  language=language_of(tr), source=source,
                  expected_points=best.expected_points, lead=moves[0].loss, lead_stderr=moves[0].loss_stderr,
                  method=result.method)
