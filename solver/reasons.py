"""Why a move, in one or two plain sentences from the figures of two moves of
one position, in the reader's language: the one place that turns a search's
figures into words.

* ``error_reason``: why an error lost (the analysis's reasons): what the
  played move did, then what the best move gains and where.
* ``hint_reasons``: why a hint's top moves (a hint's reasons): the
  recommended move against the runner-up, and each move within reach of the
  recommended one (its difference to the best within REACH of its standard
  errors, or the runner-up) against it; at most MAX_REASONS of them.

Both compare two moves (a ``Contrast``): what a move takes or leaves on the
table, the chance that the next player sweeps it (``scopa_risk``), the
expected points by category (``categories``), the points, and where the
chance of winning the match ranks the moves (``RankedBy.WIN_CHANCE``) that
chance. A reason writes no number but the two moves' own figures, formatted
alike in every language (i18n):

    a difference of expected points          0.42, signed beside a category
                                              (scope +0.35) or as a hand's
                                              points beside a chance (+0.10)
    a scopa risk                             35%
    a difference in the chance of winning    2.1%
    the sum of the cards left on the table   (14), and counts of cards taken

and the moves in their text form (7C x 2C 5S: card codes in every language,
a declaration's verb translated). A reason costs microseconds.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from .cards import Card, format_cards
from .events import CATEGORIES
from .i18n import N_, Translations, translator
from .moves import Move
from .search import MoveStats, RankedBy, SearchResult

__all__ = ["Contrast", "ErrorKind", "MAX_REASONS", "REACH", "error_kind", "error_reason", "hint_reasons",
           "move_words"]

REACH = 2.0                     # standard errors: a move this close to the best gets a reason in a hint
MAX_REASONS = 4                 # reasons in a hint at most (the recommended move's first)
EVEN = 0.005                    # points this close write as equal ("0.00")
WIN_EVEN = 0.0005               # chances of winning this close write as equal ("0.0%")
RACES = ("cards", "diamonds", "settebello", "primiera", "grande", "piccola", "re_bello")
SCOPA_RISK_GAP = 0.10           # a move "gives a scopa" when it adds this much sweep chance ...
SCOPA_SHARE = 0.4               # ... and the scope account for this share of its loss at least
# a category among others in a reason's list of figures: "scope +0.90, the settebello -0.15"
CATEGORY_WORDS = {"scope": N_("scope"), "declarations": N_("declarations"), "cards": N_("cards"),
                  "diamonds": N_("diamonds"), "settebello": N_("the settebello"), "primiera": N_("primiera"),
                  "grande": N_("the grande"), "piccola": N_("the piccola"), "re_bello": N_("the re bello")}
# the first sentence of a reason for ground given in one category (each whole: its words change with it)
GROUND_GIVEN = {
    "scope": N_("%(move)s gives ground for scope (%(points)s)"),
    "declarations": N_("%(move)s gives ground for declarations (%(points)s)"),
    "cards": N_("%(move)s gives ground for cards (%(points)s)"),
    "diamonds": N_("%(move)s gives ground for diamonds (%(points)s)"),
    "settebello": N_("%(move)s gives ground for the settebello (%(points)s)"),
    "primiera": N_("%(move)s gives ground for primiera (%(points)s)"),
    "grande": N_("%(move)s gives ground for the grande (%(points)s)"),
    "piccola": N_("%(move)s gives ground for the piccola (%(points)s)"),
    "re_bello": N_("%(move)s gives ground for the re bello (%(points)s)"),
}


class ErrorKind(StrEnum):
    """What an error did, read from the two moves' figures: the first that fits,
    in this order (see error_kind)."""
    DECLARATION = "declaration"         # declared where another move was better, or did not declare
    GAVE_SCOPA = "gave_scopa"           # left the next player a sweep the best move did not
    MISSED_CAPTURE = "missed_capture"   # played to the table (or took less) where a capture was better
    OVER_CAPTURED = "over_captured"     # took more than the best move, and lost by it elsewhere
    LOST_RACE = "lost_race"             # gave up ground for cards, diamonds, the settebello, primiera, runs
    OTHER = "other"


@dataclass(frozen=True, kw_only=True)
class Contrast:
    """Two moves of one position and their figures from the search, for the
    seat's side: `move`, the one a reason is about, against `other` (the best
    move, or the runner-up of a hint's recommended move)."""
    table: tuple[Card, ...]             # the table before the move
    move: Move
    other: Move
    points: float                       # the move's expected points minus the other's (paired)
    scopa_risk: float                   # the next player's chance to sweep the table after the move
    other_scopa_risk: float
    categories: Mapping[str, float]     # the move's expected points by category (events.CATEGORIES)
    other_categories: Mapping[str, float]
    win_chance: float | None = None     # the move's chance of winning the match minus the other's, where
                                        # that chance ranks the moves; else None

    @classmethod
    def of(cls, table: Sequence[Card], move: MoveStats, other: MoveStats, *, points: float,
           by_win: bool) -> Contrast:
        """Two moves of one search's ranking; `points`, their paired difference
        (the diff_to_best of whichever is not the recommended move)."""
        win = None
        if by_win and move.win_chance is not None and other.win_chance is not None:
            win = move.win_chance - other.win_chance
        return cls(table=tuple(table), move=move.move, other=other.move, points=points,
                   scopa_risk=move.scopa_risk, other_scopa_risk=other.scopa_risk, categories=move.categories,
                   other_categories=other.categories, win_chance=win)

    def gains(self) -> dict[str, float]:
        """By category, what the other move gains over this one."""
        return {c: self.other_categories.get(c, 0.0) - self.categories.get(c, 0.0) for c in CATEGORIES}

    def sweeps(self, move: Move) -> bool:
        """The move takes the whole table (a scopa, R-SCOPA, unless the rules say otherwise)."""
        return bool(move.captured) and set(move.captured) == set(self.table)

    def table_after(self) -> tuple[Card, ...]:
        """The table after this contrast's move."""
        m = self.move
        if m.card is None:
            return self.table
        left = tuple(c for c in self.table if c not in m.captured)
        return left if m.captured else (*left, m.card)


def _points(x: float) -> str:
    return f"{x:+.2f}"


def _total(cards: Sequence[Card]) -> int:
    return sum(c.rank + 1 for c in cards)


def move_words(move: Move, tr: Translations) -> str:
    """A move as a reason names it: its text form (7C x 2C 5S, card codes in
    every language), a declaration's verb in the reader's language."""
    text = str(move)
    if move.is_declaration:
        return tr.pgettext("move", "declare") + text.removeprefix("declare")
    return text


def _where(diffs: Mapping[str, float], tr: Translations) -> str:
    """The two categories that differ most, with their signed figures: "scope +0.90, cards -0.10"."""
    _ = tr.gettext
    top = sorted((c for c in CATEGORIES if abs(diffs[c]) >= EVEN), key=lambda c: -abs(diffs[c]))[:2]
    return ", ".join(_("%(category)s %(points)s") % {"category": _(CATEGORY_WORDS[c]), "points": _points(diffs[c])}
                     for c in top)


def _sentence(first: str, second: str, where: str, tr: Translations) -> str:
    _ = tr.gettext
    if where:
        second = _("%(figures)s (%(where)s)") % {"figures": second, "where": where}
    return _("%(first)s; %(second)s.") % {"first": first, "second": second}


# --- an error: the played move against the best -------------------------------------

def error_kind(c: Contrast) -> ErrorKind:
    """What an error (`c.move`, against the best `c.other`) did: the first of
    ErrorKind's kinds that its figures fit."""
    played, best = c.move, c.other
    gains = c.gains()
    total = sum(g for g in gains.values() if g > 0)
    if played.is_declaration or best.is_declaration:
        return ErrorKind.DECLARATION
    if c.scopa_risk - c.other_scopa_risk >= SCOPA_RISK_GAP and gains["scope"] >= SCOPA_SHARE * total:
        return ErrorKind.GAVE_SCOPA
    if len(best.captured) > len(played.captured) or (c.sweeps(best) and not c.sweeps(played)):
        return ErrorKind.MISSED_CAPTURE
    if len(played.captured) > len(best.captured):
        return ErrorKind.OVER_CAPTURED
    if sum(max(gains[cat], 0.0) for cat in RACES) >= 0.5 * total > 0:
        return ErrorKind.LOST_RACE
    return ErrorKind.OTHER


def error_reason(c: Contrast, kind: ErrorKind | None = None, tr: Translations | None = None) -> str:
    """Why an error lost: what the played move (`c.move`) did, then what the
    best move (`c.other`) gains and where, in the language of `tr` (English
    by default). Its figures: the loss (-c.points), the scopa risks of both
    moves, the categories' gains (c.gains()), the chance of winning lost."""
    tr = tr or translator()
    _ = tr.gettext
    kind = kind or error_kind(c)
    played, best = c.move, c.other
    words = {"move": move_words(played, tr), "best": move_words(best, tr)}
    gains = c.gains()
    loss = 0.0 - c.points
    first: str
    if kind is ErrorKind.DECLARATION:
        first = (_("Declaring %(cards)s was not the best move") % {"cards": format_cards(played.declared)}
                 if played.is_declaration else
                 _("Playing %(move)s instead of declaring %(cards)s gave up points")
                 % {**words, "cards": format_cards(best.declared)})
    elif kind is ErrorKind.GAVE_SCOPA:
        left = c.table_after()
        first = _("%(move)s leaves %(cards)s (%(total)s) on the table: the next player sweeps it %(risk)s of the "
                  "time, against %(best_risk)s after the best move (scope %(scope)s)") % {
            **words, "cards": format_cards(left), "total": _total(left),
            "risk": f"{c.scopa_risk:.0%}", "best_risk": f"{c.other_scopa_risk:.0%}",
            "scope": _points(-gains["scope"])}
    elif kind is ErrorKind.MISSED_CAPTURE:
        sweeps = c.sweeps(best)
        if played.captured:
            first = (_("%(move)s takes only %(taken)s, where %(best)s takes %(cards)s and sweeps the table")
                     if sweeps else _("%(move)s takes only %(taken)s, where %(best)s takes %(cards)s"))
        else:
            first = (_("%(move)s takes nothing, where %(best)s takes %(cards)s and sweeps the table")
                     if sweeps else _("%(move)s takes nothing, where %(best)s takes %(cards)s"))
        first %= {**words, "taken": format_cards(played.captured), "cards": format_cards(best.captured)}
    elif kind is ErrorKind.OVER_CAPTURED:
        count = len(played.captured)
        first = tr.ngettext("%(move)s takes %(count)s card, more than the best move's %(best_count)s, and pays for "
                            "it elsewhere",
                            "%(move)s takes %(count)s cards, more than the best move's %(best_count)s, and pays for "
                            "it elsewhere", count) % {**words, "count": count, "best_count": len(best.captured)}
    else:
        worst = max(RACES if kind is ErrorKind.LOST_RACE else CATEGORIES, key=lambda cat: gains[cat])
        first = _(GROUND_GIVEN[worst]) % {**words, "points": _points(-gains[worst])}
    if c.win_chance is not None:
        # near the target the chance of winning the match ranks the moves, and
        # a move can win it with fewer points in this hand
        second = _("the best move, %(best)s, is worth %(chance)s more chance of winning the match and %(loss)s "
                   "points more in this hand") % {**words, "chance": f"{0.0 - c.win_chance:.1%}",
                                                  "loss": f"{loss:.2f}"}
    else:
        second = _("the best move, %(best)s, is worth %(loss)s points more") % {**words, "loss": f"{loss:.2f}"}
    return _sentence(first, second, _where(gains, tr), tr)


# --- a hint: its top moves ---------------------------------------------------------------

def hint_reasons(result: SearchResult, table: Sequence[Card], tr: Translations | None = None) -> tuple[str, ...]:
    """A reason for each of a ranking's top moves, in the order of
    `result.moves` ("" for a move without one): the recommended move's against
    the runner-up, and each move within reach of it (REACH standard errors of
    its paired difference, or the runner-up) against the recommended move; at
    most MAX_REASONS. `table`: the position's table, before the move."""
    tr = tr or translator()
    moves = result.moves
    reasons = [""] * len(moves)
    if not moves:
        return ()
    if len(moves) == 1:
        reasons[0] = tr.gettext("%(move)s is the only legal move.") % {"move": move_words(moves[0].move, tr)}
        return tuple(reasons)
    best, runner = moves[0], moves[1]
    by_win = result.ranked_by is RankedBy.WIN_CHANCE
    reasons[0] = _recommended(Contrast.of(table, best, runner, points=0.0 - runner.diff_to_best, by_win=by_win), tr)
    given = 1
    for i, m in enumerate(moves[1:], 1):
        if given >= MAX_REASONS:
            break
        if m is runner or -m.diff_to_best <= REACH * m.diff_to_best_stderr:
            reasons[i] = _alternative(Contrast.of(table, m, best, points=m.diff_to_best, by_win=by_win), tr)
            given += 1
    return tuple(reasons)


def _does(c: Contrast, tr: Translations) -> str:
    """What the move does: what it takes, what it leaves on the table, and
    the sweep risk it makes or removes against the other move."""
    _ = tr.gettext
    m = c.move
    words = {"move": move_words(m, tr), "other": move_words(c.other, tr)}
    left = c.table_after()
    if m.is_declaration:
        does = _("%(move)s now") % words
    elif m.captured and not left:
        does = _("%(move)s takes %(cards)s and sweeps the table") % {**words, "cards": format_cards(m.captured)}
    elif m.captured:
        does = _("%(move)s takes %(cards)s and leaves %(left)s (%(total)s) on the table") % {
            **words, "cards": format_cards(m.captured), "left": format_cards(left), "total": _total(left)}
    else:
        does = _("%(move)s leaves %(cards)s (%(total)s) on the table") % {
            **words, "cards": format_cards(left), "total": _total(left)}
    risks = {"does": does, **words, "risk": f"{c.scopa_risk:.0%}", "other_risk": f"{c.other_scopa_risk:.0%}"}
    if m.is_declaration or c.other.is_declaration:     # the same seat plays again: no sweep to weigh
        return does
    if c.scopa_risk - c.other_scopa_risk >= SCOPA_RISK_GAP:
        return _("%(does)s: the next player sweeps the table %(risk)s of the time, against %(other_risk)s "
                 "after %(other)s") % risks
    if c.other_scopa_risk - c.scopa_risk >= SCOPA_RISK_GAP and m.captured and not left:
        return _("%(does)s, leaving nothing to sweep, where after %(other)s the next player sweeps the table "
                 "%(other_risk)s of the time") % risks
    if c.other_scopa_risk - c.scopa_risk >= SCOPA_RISK_GAP:
        return _("%(does)s, and the next player sweeps the table only %(risk)s of the time, against "
                 "%(other_risk)s after %(other)s") % risks
    return does


def _recommended(c: Contrast, tr: Translations) -> str:
    """The recommended move (`c.move`) against the runner-up (`c.other`): the
    categories it wins (+) or gives up (-). Where the chance of winning the
    match ranks the moves, that chance first, unless it is even and the
    points tell the moves apart."""
    _ = tr.gettext
    win = c.win_chance
    words = {"other": move_words(c.other, tr), "points": f"{abs(c.points):.2f}", "hand": _points(c.points),
             "chance": f"{abs(win or 0.0):.1%}"}
    if win is not None and (abs(win) >= WIN_EVEN or c.points <= -EVEN):
        if abs(win) < WIN_EVEN:
            second = _("it gives as much chance of winning the match as the runner-up, %(other)s, with %(hand)s "
                       "points in this hand")
        elif win > 0:
            second = _("it gives %(chance)s more chance of winning the match than the runner-up, %(other)s, with "
                       "%(hand)s points in this hand")
        else:                   # an interim ranking (the tree's figures)
            second = _("it gives %(chance)s less chance of winning the match than the runner-up, %(other)s, on the "
                       "figures so far, with %(hand)s points in this hand")
    elif c.points >= EVEN:
        second = _("it is worth %(points)s points more than the runner-up, %(other)s")
    elif c.points > -EVEN:
        second = _("it is worth as much as the runner-up, %(other)s")
    else:                       # an interim ranking (the tree's figures)
        second = _("it is worth %(points)s points less than the runner-up, %(other)s, on the figures so far")
    mine = {cat: -g for cat, g in c.gains().items()}
    return _sentence(_does(c, tr), second % words, _where(mine, tr), tr)


def _alternative(c: Contrast, tr: Translations) -> str:
    """A move within reach (`c.move`) against the recommended one
    (`c.other`): what the best move gains over it (+) and where, as an
    error's reason says it; or, where the figures so far favour this move,
    what it gains."""
    _ = tr.gettext
    win = c.win_chance
    loss = 0.0 - c.points
    words = {"best": move_words(c.other, tr), "loss": f"{loss:.2f}", "points": f"{abs(loss):.2f}",
             "hand": _points(c.points), "chance": f"{abs(win or 0.0):.1%}"}
    gains = c.gains()
    if win is not None and (abs(win) >= WIN_EVEN or loss <= -EVEN):
        if abs(win) < WIN_EVEN:
            second = _("it gives as much chance of winning the match as the best move, %(best)s, with %(hand)s "
                       "points in this hand")
            gains = {cat: -g for cat, g in gains.items()}       # its own: the sentence is about it
        elif win < 0:
            second = (_("the best move, %(best)s, is worth %(chance)s more chance of winning the match and %(loss)s "
                        "points more in this hand") if loss >= 0 else
                      _("the best move, %(best)s, is worth %(chance)s more chance of winning the match, for "
                        "%(points)s points fewer in this hand"))
        else:                   # an interim ranking (the tree's figures)
            second = _("it gives %(chance)s more chance of winning the match than the best move, %(best)s, on the "
                       "figures so far, with %(hand)s points in this hand")
            gains = {cat: -g for cat, g in gains.items()}
    elif loss >= EVEN:
        second = _("the best move, %(best)s, is worth %(loss)s points more")
    elif loss > -EVEN:
        second = _("it is worth as much as the best move, %(best)s")
    else:                       # an interim ranking (the tree's figures)
        second = _("it is worth %(points)s points more than the best move, %(best)s, on the figures so far")
        gains = {cat: -g for cat, g in gains.items()}
    return _sentence(_does(c, tr), second % words, _where(gains, tr), tr)
