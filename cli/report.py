"""`cirulla analyze --html`: the analysis as one self-contained page.

This module prepares plain data (every number formatted here, once) for the
Jinja2 templates in cli/templates/ (report.html and its partials, the CSS and
the small script inlined into it), rendered with autoescape. The page fetches
nothing: a Content-Security-Policy forbids every network load, the CSS and
the script are inline, the cards and the graph are HTML and inline SVG.

What it shows, in order: the three costliest errors of each player (each
with its position and why it lost), the evaluation graph beside the position
of the decision in focus (← / → or a click move the focus), the players, where
the result came from (dealer's edge, luck of the deals, hidden luck, play,
noise), the luck of each deal, and every decision.

Every word on it is in the reader's language (cirulla.solver.i18n): the
templates' through Jinja2's i18n extension, this module's through the same
translator, the reasons explained again from each decision's figures.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from cirulla.solver import analysis
from cirulla.solver.analysis import Decision, JudgedBy, PointKind, Summary, TimelinePoint
from cirulla.solver.cards import CARD_CODE, RANKS, SUIT_SYMBOLS, Card, ordered
from cirulla.solver.events import CATEGORIES, Deal, HandEnd
from cirulla.solver.i18n import N_, Translations, language_of, translator, whole
from cirulla.solver.match import Match
from cirulla.solver.moves import Move

from .render import CATEGORY_NAMES, GRADE_WORDS, goal, grade_count, result_digits

if TYPE_CHECKING:
    from jinja2 import Environment

SIDE_COLOURS = ("#2563eb", "#db2777")
THIRD_SIDE = "#0d9488"              # the third side of a 3-player match
GRADE_COLOURS = {"inaccuracy": "#d4a106", "mistake": "#f97316", "blunder": "#dc2626"}
# the five parts of the result, each its own colour (the split's bars and its legend)
PART_COLOURS = {"start": "#64748b", "luck": "#0ea5e9", "hidden_luck": "#8b5cf6", "play": "#16a34a",
                "noise": "#d6a35c"}
PART_LABELS = {"start": N_("dealer's edge"), "luck": N_("luck of the deals"), "hidden_luck": N_("hidden luck"),
               "play": N_("play"), "noise": N_("noise")}
PHASE_WORDS = {"first_round": N_("first round"), "middle": N_("middle of the hand"),
               "last_two_rounds": N_("last two rounds (solved exactly)")}
# a card in words (its tooltip): the ranks and the suits of the Genoese pack (docs/rules.md, R-SUITS)
RANK_NAMES = (N_("ace"), "2", "3", "4", "5", "6", "7", N_("jack"), N_("queen"), N_("king"))   # (digits: no message)
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
WORST = 3                           # errors per player at the top of the page


def _template_text(name: str) -> str:
    return resources.files("cirulla.cli").joinpath("templates", name).read_text(encoding="utf-8")


# The report's style sheet (cli/templates/report.css); cli/batch.py's page uses it too.
CSS = _template_text("report.css")
JS = _template_text("report.js")


@lru_cache(maxsize=4)
def environment(tr: Translations | None = None) -> Environment:
    """The templates of cli/templates/ in the language of `tr` (English by
    default), HTML autoescaped; `cardtext` draws the cards named in a text (a
    reason, a move) in their suits' colours. The templates' texts are _()
    calls and {% trans %} blocks, their whitespace trimmed (as babel.cfg
    extracts them); `lang` is the page's language tag."""
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
    tr = tr or translator()
    env = Environment(loader=PackageLoader("cirulla.cli", "templates"),
                      autoescape=select_autoescape(["html", "svg"], default_for_string=True),
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                      undefined=StrictUndefined, extensions=["jinja2.ext.i18n"])
    env.policies["ext.i18n.trimmed"] = True
    env.install_gettext_translations(tr, newstyle=True)     # type: ignore[attr-defined]
    env.globals["lang"] = language_of(tr)
    env.filters["cardtext"] = card_text
    return env


def card_text(text: str) -> Any:
    """Text with its card codes (7D) as suit symbols, red suits red: escaped
    HTML, safe to insert."""
    from markupsafe import Markup, escape

    def one(m: re.Match[str]) -> str:
        c = Card.parse(m.group(0))
        return f'<span class="c{" r" if c.suit < 2 else ""}">{RANKS[c.rank]}{SUIT_SYMBOLS[c.suit]}</span>'
    return Markup(CARD_CODE.sub(one, str(escape(text)).replace(" x ", " × ")))


# --- numbers, cards and moves as plain data -----------------------------------------------

@dataclass(frozen=True)
class Num:
    """A signed figure formatted once, with its sign's class (pos/neg/dim)."""
    text: str
    cls: str


def side_colour(side: int) -> str:
    return SIDE_COLOURS[side] if side < 2 else THIRD_SIDE


def signed(x: float, digits: int = 2) -> Num:
    text = f"{x:+.{digits}f}"
    if float(text) == 0:
        return Num(f"{0.0:.{digits}f}", "dim")
    return Num(text, "pos" if x > 0 else "neg")


def percent(x: float | None, digits: int = 0) -> str:
    return "" if x is None else f"{100 * x:.{digits}f}%"


@dataclass(frozen=True)
class CardView:
    rank: str
    suit: str               # the symbol
    red: bool
    matta: bool
    code: str               # 7H
    name: str               # 7 of hearts
    mark: str = ""          # CSS classes: played, taken, best


def card_name(c: Card, tr: Translations, matta: Card | None = None) -> str:
    """A card in words: "7 of hearts — the matta (wild card)"."""
    _ = tr.gettext
    # "diamonds" is a category too (denari): as a suit it has its own context (quadri)
    suits = (tr.pgettext("suit", "diamonds"), tr.pgettext("suit", "hearts"), tr.pgettext("suit", "clubs"),
             tr.pgettext("suit", "spades"))
    name = _("%(rank)s of %(suit)s") % {"rank": _(RANK_NAMES[c.rank]), "suit": suits[c.suit]}
    return _("%(card)s — the matta (wild card)") % {"card": name} if c == matta else name


def card_view(c: Card, matta: Card | None, mark: str = "", *, tr: Translations | None = None) -> CardView:
    return CardView(rank=RANKS[c.rank], suit=SUIT_SYMBOLS[c.suit], red=c.suit < 2, matta=c == matta, code=str(c),
                    name=card_name(c, tr or translator(), matta), mark=mark)


def card_views(cards: Iterable[Card], matta: Card | None, marks: dict[Card, str] | None = None, *,
               tr: Translations | None = None) -> list[CardView]:
    marks = marks or {}
    return [card_view(c, matta, marks.get(c, ""), tr=tr) for c in ordered(cards)]


@dataclass(frozen=True)
class MoveView:
    """A move as the templates draw it: a card and what it takes, or a declaration."""
    text: str                                   # its text form, 7C x 2C 5S
    card: CardView | None
    captured: list[CardView]
    declared: list[CardView]
    matta_as: str = ""
    points: int = 0


def move_view(m: Move, matta: Card | None, tr: Translations) -> MoveView:
    declared = card_views([*m.declared, *m.declared_second], matta, tr=tr)
    return MoveView(text=str(m), card=None if m.card is None else card_view(m.card, matta, tr=tr),
                    captured=card_views(m.captured, matta, tr=tr), declared=declared,
                    matta_as="" if m.matta_as is None else RANKS[m.matta_as], points=m.points)


def _move_cards(m: Move) -> tuple[set[Card], set[Card]]:
    """The cards a move uses from the hand, and those it takes from the table."""
    own = {m.card} if m.card is not None else {*m.declared, *m.declared_second}
    return own, set(m.captured)


# --- the position at a decision --------------------------------------------------------------

@dataclass
class Parts:
    """Side 0's parts of the steps of the graph (TimelinePoint's)."""
    luck: float = 0.0
    hidden_luck: float = 0.0
    play: float = 0.0
    noise: float = 0.0

    def add(self, p: TimelinePoint) -> None:
        self.luck += p.luck
        self.hidden_luck += p.hidden_luck
        self.play += p.play
        self.noise += p.noise

    def views(self) -> dict[str, Num]:
        return {k: signed(getattr(self, k)) for k in ("luck", "hidden_luck", "play", "noise")}


@dataclass
class DecisionView:
    number: int
    label: str                      # #13
    where: str                      # H1 R3
    hand_round: str                 # 1.3
    seat: int
    player: str
    side: int
    side_name: str
    colour: str
    cls: str                        # forced, inaccuracy, mistake, blunder or ""
    judgement: str
    judgement_word: str             # the judgement (or "forced") in the reader's language
    forced: bool
    severity: float
    played: MoveView
    best: MoveView | None           # None: the played move was the best
    loss: str
    loss_se: str
    win: str                        # the win chance after the played move (with its change), if rated
    win_drop: str                   # the drop in win chance, where the judgement graded it
    hindsight: MoveView | None
    hindsight_loss: str
    reason: str
    kind: str
    phase: str
    parts: dict[str, Num] = field(default_factory=dict)     # side 0's, this decision's steps
    margin: str = ""                # side 0's expected margin after the move
    hand: list[CardView] = field(default_factory=list)
    table: list[CardView] = field(default_factory=list)
    unseen: list[CardView] = field(default_factory=list)
    scores: list[tuple[str, str, str, str]] = field(default_factory=list)  # side, colour, match, this hand
    held: list[tuple[str, int]] = field(default_factory=list)
    scopa_risk: tuple[str, str] = ("", "")                                   # played, best
    categories: list[tuple[str, Num, Num]] = field(default_factory=list)    # category, played, best


def hand_round_label(hand: int, rnd: int, tr: Translations) -> str:
    """A decision's hand and round, short: "H1 R3" (both 0-based)."""
    return tr.gettext("H%(hand)s R%(round)s") % {"hand": hand + 1, "round": rnd + 1}


def decision_view(d: Decision, match: Match, matta: Card | None, tr: Translations) -> DecisionView:
    _ = tr.gettext
    names, sides = match.names, match.side_names
    same = d.forced or d.played == d.best
    win = ""
    if d.win_chance is not None:
        win = percent(d.win_chance, 1)
        if not same and d.win_chance_loss is not None:
            win += f" ({-100 * d.win_chance_loss:+.1f})"
    p = d.position
    own, taken = _move_cards(d.played)
    best_own, best_taken = _move_cards(d.best) if not same else (set(), set())

    def marks(cards: Iterable[Card], played: set[Card], best: set[Card], word: str) -> dict[Card, str]:
        return {c: " ".join(w for w, on in ((word, c in played), ("best", c in best)) if on) for c in cards}

    categories = [(_(CATEGORY_NAMES[c]), signed(d.played_categories.get(c, 0.0)), signed(d.best_categories.get(c, 0.0)))
                  for c in CATEGORIES
                  if abs(d.played_categories.get(c, 0.0)) >= 0.005 or abs(d.best_categories.get(c, 0.0)) >= 0.005]
    return DecisionView(
        number=d.number, label=f"#{d.number + 1}", where=hand_round_label(d.hand, d.round, tr),
        hand_round=f"{d.hand + 1}.{d.round + 1}", seat=d.seat, player=names[d.seat], side=d.side,
        side_name=sides[d.side], colour=side_colour(d.side),
        cls="forced" if d.forced else (d.judgement or ""), judgement=d.judgement or "",
        judgement_word=_("forced") if d.forced else _(GRADE_WORDS[d.judgement]) if d.judgement else "",
        forced=d.forced, severity=d.severity, played=move_view(d.played, matta, tr),
        best=None if same else move_view(d.best, matta, tr),
        loss="" if same else f"{d.loss:.2f}", loss_se="" if same else f"{d.loss_stderr:.2f}", win=win,
        win_drop="" if same or d.judged_by is not JudgedBy.WIN_CHANCE or d.win_chance_loss is None
        else f"{-100 * d.win_chance_loss:+.1f}%",
        hindsight=None if d.forced else move_view(d.hindsight_best, matta, tr),
        hindsight_loss=f"{d.hindsight_loss:.2f}" if not d.forced and d.hindsight_loss > 0.005 else "",
        reason=analysis.explain(d, tr) if d.judgement else "", kind=str(d.kind or ""),
        phase=_(PHASE_WORDS[d.phase]) if d.phase in PHASE_WORDS else str(d.phase),
        hand=card_views(p.hand, matta, marks(p.hand, own, best_own, "played"), tr=tr),
        table=card_views(p.table, matta, marks(p.table, taken, best_taken, "taken"), tr=tr),
        unseen=card_views(p.unseen, matta, tr=tr),
        scores=[(sides[s], side_colour(s), str(p.scores[s]), str(p.hand_points[s]))
                for s in range(len(p.scores))],
        held=[(names[s], n) for s, n in enumerate(p.hand_sizes) if s != d.seat],
        scopa_risk=(percent(d.played_scopa_risk), "" if same else percent(d.best_scopa_risk)),
        categories=categories)


# --- the evaluation graph ----------------------------------------------------------------------

W, LEFT, RIGHT = 760, 50, 12
TOP, PLOT_H, GAP, LUCK_H, AXIS = 30, 230, 44, 70, 8
AHEAD_CHAR = 7.0                    # px a character of the "ahead" labels takes (12 px, semibold)


def _point_round(p: TimelinePoint, match: Match, by_number: dict[int, Decision]) -> int:
    if p.kind is PointKind.TURN and p.decision is not None:
        return by_number[p.decision].round
    e = match.events[p.event_index] if 0 <= p.event_index < len(match.events) else None
    return e.round if isinstance(e, Deal) else -1


def graph_data(summary: Summary, decisions: Sequence[Decision], match: Match, tr: Translations) -> dict[str, Any]:
    """The graph's geometry, every coordinate formatted: side 0's expected
    margin after every event, the errors on it, hands as bands, rounds as
    ticks, the luck of each deal below."""
    _ = tr.gettext
    points = summary.timeline
    by_number = {d.number: d for d in decisions}
    sides, names = match.side_names, match.names
    n = len(points)
    xs = [LEFT + (W - LEFT - RIGHT) * i / max(n - 1, 1) for i in range(n)]
    lo = min(0.0, min(p.margin for p in points))
    hi = max(0.0, max(p.margin for p in points))
    pad = max(2.0, 0.08 * (hi - lo))
    lo, hi = lo - pad, hi + pad
    bottom = TOP + PLOT_H + GAP + LUCK_H
    height = bottom + AXIS + 34

    def y(v: float) -> float:
        return TOP + PLOT_H * (hi - v) / (hi - lo)

    def f(v: float) -> str:
        return f"{v:.1f}"

    hands = []
    for h in sorted({p.hand for p in points}):
        idx = [i for i, p in enumerate(points) if p.hand == h]
        x0, x1 = xs[idx[0]], xs[idx[-1]]
        hands.append({"x": f(x0), "w": f(x1 - x0), "mid": f((x0 + x1) / 2),
                      "label": _("Hand %(hand)s") % {"hand": h + 1}, "shade": h % 2 == 1, "sep": idx[0] > 0})
    # a tick at each round's deal: H1 R1 at a hand's first, R2 ... after it
    ticks: list[dict[str, Any]] = []
    last_x = -1e9
    for i, p in enumerate(points):
        if p.kind is not PointKind.DEAL:
            continue
        r = _point_round(p, match, by_number)
        if ticks and ticks[-1]["hand"] == p.hand and ticks[-1]["round"] == r:
            continue                                    # a void deal dealt again
        label = hand_round_label(p.hand, r, tr) if r == 0 else _("R%(round)s") % {"round": r + 1}
        show = xs[i] - last_x >= (34 if r == 0 else 18)
        if show:
            last_x = xs[i]
        ticks.append({"x": f(xs[i]), "label": label if show else "", "hand": p.hand, "round": r,
                      "first": r == 0})
    grid = []
    step = _nice_step((hi - lo) / 5)
    v = step * int(lo / step)
    while v <= hi:
        if v >= lo:
            grid.append({"y": f(y(v)), "label": f"{v:+g}", "zero": v == 0})
        v += step
    zero = y(0)
    ahead = []
    for side, (a, b) in enumerate(((TOP, zero), (zero, TOP + PLOT_H))):
        label = _("%(side)s ahead") % {"side": sides[side]}
        if b - a > max(50, AHEAD_CHAR * len(label)):       # where it fits beside its half of the graph
            ahead.append({"y": f((a + b) / 2), "label": label, "colour": SIDE_COLOURS[side]})
    path = " ".join(f"{'M' if i == 0 else 'L'}{xs[i]:.1f},{y(p.margin):.1f}" for i, p in enumerate(points))
    area = f"{path} L{xs[-1]:.1f},{zero:.1f} L{xs[0]:.1f},{zero:.1f} Z"
    ends, turns, errors = [], [], []
    for i, p in enumerate(points):
        cx, cy = f(xs[i]), f(y(p.margin))
        if p.kind is PointKind.END:
            ends.append({"x": cx, "y": cy, "title": _("End of hand %(hand)s: score margin %(margin)s")
                         % {"hand": p.hand + 1, "margin": f"{p.margin:+.0f}"}})
        d = by_number.get(p.decision) if p.kind is PointKind.TURN and p.decision is not None else None
        if d is None:
            continue
        tip = (f"#{d.number + 1}, {hand_round_label(d.hand, d.round, tr)}, {names[d.seat]}: {d.played} — "
               f"{sides[0]} {p.margin:+.2f}")
        turns.append({"x": cx, "y": cy, "decision": d.number, "title": tip})
        if d.judgement is not None:
            errors.append({"x": cx, "y": cy, "decision": d.number, "judgement": str(d.judgement),
                           "r": {"inaccuracy": 4.5, "mistake": 5.5, "blunder": 7}[d.judgement],
                           "colour": GRADE_COLOURS[d.judgement],
                           "title": _("%(player)s, hand %(hand)s round %(round)s: %(move)s — %(judgement)s, "
                                      "lost %(loss)s points; best %(best)s")
                           % {"player": names[d.seat], "hand": d.hand + 1, "round": d.round + 1, "move": d.played,
                              "judgement": _(GRADE_WORDS[d.judgement]), "loss": f"{d.loss:.2f}", "best": d.best}})
    ly0 = TOP + PLOT_H + GAP
    mid = ly0 + LUCK_H / 2
    biggest = max([abs(dl.luck) for dl in summary.deals] + [1.0])
    where = {p.event_index: i for i, p in enumerate(points) if p.kind is PointKind.DEAL}
    bw = max(3.0, min(10.0, (W - LEFT - RIGHT) / max(n, 1) * 0.9))
    bars = []
    for dl in summary.deals:
        at = where.get(dl.event_index)
        if at is None:
            continue
        bh = (LUCK_H / 2 - 4) * abs(dl.luck) / biggest
        bars.append({"x": f(xs[at] - bw / 2), "y": f(mid - bh if dl.luck >= 0 else mid), "w": f(bw),
                     "h": f(max(bh, 0.8)), "luck": f"{dl.luck:.3f}",
                     "colour": SIDE_COLOURS[0] if dl.luck >= 0 else SIDE_COLOURS[1],
                     "title": _("Hand %(hand)s, deal of round %(round)s: %(luck)s for %(side)s")
                     % {"hand": dl.hand + 1, "round": dl.round + 1, "luck": f"{dl.luck:+.2f}", "side": sides[0]}})
    return {"w": W, "h": height, "left": LEFT, "right": W - RIGHT, "top": TOP, "plot_bottom": f(TOP + PLOT_H),
            "bottom": bottom, "axis_y": bottom + AXIS, "n": n, "hands": hands, "ticks": ticks, "grid": grid,
            "ahead": ahead, "path": path, "area": area, "zero": f(zero), "ends": ends, "turns": turns,
            "errors": errors, "bars": bars, "luck_top": ly0, "luck_mid": f(mid), "side0": sides[0],
            "colours": SIDE_COLOURS}


def _nice_step(raw: float) -> float:
    for s in (1, 2, 5, 10, 20, 25, 50, 100):
        if raw <= s:
            return float(s)
    return 100.0 * round(raw / 100 + 0.5)


# --- the summary --------------------------------------------------------------------------------

def players_data(summary: Summary, tr: Translations) -> list[dict[str, Any]]:
    _ = tr.gettext
    out = []
    for p in summary.players:
        out.append({
            "seat": p.seat, "name": p.name, "colour": side_colour(p.side), "accuracy": f"{p.accuracy:.1f}",
            "chips": [(g, n, grade_count(g, n, tr)) for g, n in (("inaccuracy", p.inaccuracies),
                                                                  ("mistake", p.mistakes), ("blunder", p.blunders))],
            "facts": [(_("decisions (forced)"), f"{p.decisions} ({p.forced})"), (_("points lost"), f"{p.loss:.2f}"),
                      (_("lost per unforced decision"), f"{p.average_loss:.3f}"),
                      (_("lost against perfect knowledge"), f"{p.hindsight_loss:.1f}"),
                      (_("… by the best moves it could see"), f"{p.unavoidable_loss:.1f}")]})
    return out


def split_data(summary: Summary, tr: Translations) -> dict[str, Any]:
    """The table of the five parts by side, and side 0's waterfall: each part
    a bar from the running total, the result last."""
    _ = tr.gettext
    keys = tuple(PART_COLOURS)
    rows = [{"side": s.side, "name": s.name, "colour": side_colour(s.side),
             "result": f"{s.result:+.{result_digits(s.result)}f}", "parts": [signed(getattr(s, k)) for k in keys]}
            for s in summary.sides]
    s0 = summary.sides[0]
    values = [getattr(s0, k) for k in keys]
    running, ends = 0.0, [0.0]
    for v in values:
        running += v
        ends.append(running)
    lo, hi = min(*ends, s0.result, 0.0), max(*ends, s0.result, 0.0)
    span = (hi - lo) or 1.0

    def pct(v: float) -> str:
        return f"{100 * (v - lo) / span:.2f}"

    steps = []
    for k, v, a in zip(keys, values, ends, strict=False):
        left, right = sorted((a, a + v))
        steps.append({"key": k, "label": _(PART_LABELS[k]), "colour": PART_COLOURS[k], "value": signed(v),
                      "left": pct(left), "width": f"{max(100 * (right - left) / span, 0.4):.2f}"})
    winner = 0 if s0.result >= 0 else 1
    steps.append({"key": "result", "label": _("result"), "colour": SIDE_COLOURS[winner],
                  "value": signed(s0.result, result_digits(s0.result)),
                  "left": pct(min(0.0, s0.result)), "width": f"{max(100 * abs(s0.result) / span, 0.4):.2f}"})
    return {"rows": rows, "keys": [(_(PART_LABELS[k]), PART_COLOURS[k]) for k in keys], "steps": steps,
            "zero": pct(0.0), "side0": s0.name, "side1": summary.sides[1].name}


def luck_data(summary: Summary) -> dict[str, Any]:
    rounds = max((d.round for d in summary.deals), default=0) + 1
    rows = []
    for hand in sorted({d.hand for d in summary.deals}):
        cells: list[Num | None] = [None] * rounds
        deals = [d for d in summary.deals if d.hand == hand]
        for d in deals:
            cells[d.round] = signed(d.luck)
        rows.append({"hand": hand + 1, "cells": cells, "total": signed(sum(d.luck for d in deals))})
    return {"rounds": rounds, "rows": rows}


# --- the page -----------------------------------------------------------------------------------

def _table_rows(decisions: list[DecisionView], summary: Summary, match: Match,
                tr: Translations) -> list[dict[str, Any]]:
    """The decisions in order, with a row at each hand's start (the dealer's
    edge) and end (the score, and what the last steps did), and each
    decision's parts of the graph: the deal(s) before it and its move."""
    _ = tr.gettext
    rows: list[dict[str, Any]] = []
    by_number = {d.number: d for d in decisions}
    pending = Parts()
    before = 0.0                    # the previous point's margin
    for p in summary.timeline:
        if p.kind is PointKind.START:
            dealer = _dealer_at(match, p.event_index)
            rows.append({"kind": "start", "label": _("Hand %(hand)s") % {"hand": p.hand + 1},
                         "text": "" if dealer is None else _("%(player)s deals") % {"player": match.names[dealer]},
                         "edge": signed(p.margin - before)})
        elif p.kind is PointKind.DEAL:
            pending.add(p)
        elif p.kind is PointKind.TURN and p.decision is not None:
            pending.add(p)
            d = by_number[p.decision]
            d.parts, d.margin = pending.views(), f"{p.margin:+.2f}"
            pending = Parts()
            rows.append({"kind": "decision", "d": d})
        elif p.kind is PointKind.END:
            pending.add(p)
            e = match.events[p.event_index]
            hand_score = "" if not isinstance(e, HandEnd) else " – ".join(
                f"{n} {s.total}" for n, s in zip(match.side_names, e.sides, strict=False))
            rows.append({"kind": "end", "label": _("End of hand %(hand)s") % {"hand": p.hand + 1}, "text": hand_score,
                         "parts": pending.views(), "margin": signed(p.margin, 0)})
            pending = Parts()
        before = p.margin
    if not summary.timeline:
        rows = [{"kind": "decision", "d": d} for d in decisions]
    return rows


def _dealer_at(match: Match, event_index: int) -> int | None:
    e = match.events[event_index] if 0 <= event_index < len(match.events) else None
    return e.dealer if isinstance(e, Deal) else None


def page_data(match: Match, decisions: Sequence[Decision], summary: Summary,
              tr: Translations | None = None) -> dict[str, Any]:
    tr = tr or translator()
    _ = tr.gettext
    r = match.rules
    matta = r.matta_card
    sides = match.side_names
    views = [decision_view(d, match, matta, tr) for d in decisions]
    by_seat: dict[int, list[DecisionView]] = {}
    for v in views:
        if v.judgement:
            by_seat.setdefault(v.seat, []).append(v)
    worst = []
    for p in summary.players:
        errors = sorted(by_seat.get(p.seat, []), key=lambda v: (-v.severity, v.number))[:WORST]
        worst.append({"seat": p.seat, "name": p.name, "colour": side_colour(p.side),
                      "accuracy": f"{p.accuracy:.1f}", "errors": errors})
    costliest = max((v for v in views if v.judgement), key=lambda v: v.severity, default=None)
    focus = costliest.number if costliest is not None else (views[0].number if views else -1)
    rows = _table_rows(views, summary, match, tr)
    th = ", ".join(_(GRADE_WORDS[name]) + f" ≥ {value:g}" for name, value in reversed(analysis.THRESHOLDS))
    return {
        "csp": CSP, "css": CSS, "js": JS, "title": " vs ".join(sides), "rules": r.name, "players_n": r.players,
        "goal": goal(r.hands, r.target, tr),
        "score": [(n, s, side_colour(i)) for i, (n, s) in enumerate(zip(sides, summary.scores, strict=False))],
        "outcome": _("unfinished") if summary.winner is None else _("%(side)s won") % {"side": sides[summary.winner]},
        "matta": None if matta is None else card_view(matta, matta, tr=tr),
        "worst": worst, "focus": focus, "decisions": views, "rows": rows,
        "graph": graph_data(summary, decisions, match, tr) if summary.timeline else None,
        "players": players_data(summary, tr),
        "split": split_data(summary, tr) if summary.sides else None,
        "luck": luck_data(summary) if summary.deals else None,
        "has_win": any(v.win for v in views), "has_parts": bool(summary.timeline),
        "side0": sides[0], "side0_colour": SIDE_COLOURS[0], "grades": GRADE_COLOURS,
        "grade_words": {g: _(w) for g, w in GRADE_WORDS.items()},
        "footer": {"thresholds": th, "significance": f"{analysis.SIGNIFICANCE:g}",
                   "half": f"{analysis.HALF_ACCURACY:g}",
                   "worth": None if summary.point_worth is None else f"{100 * summary.point_worth:.1f}%",
                   "decisions": summary.decisions, "iterations": whole(summary.iterations, tr), "seed": summary.seed,
                   "seconds": f"{summary.elapsed_ms / 1000:.1f}"},
    }


def html_report(match: Match, decisions: Sequence[Decision], summary: Summary,
                tr: Translations | None = None) -> str:
    """The whole page, one self-contained file, in the language of `tr` (English by default)."""
    tr = tr or translator()
    return environment(tr).get_template("report.html").render(page_data(match, decisions, summary, tr))
