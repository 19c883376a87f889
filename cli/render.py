"""How cards, moves, hints and analyses look in a terminal (rich markup), in
the reader's language (each function's `tr`, English by default)."""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from rich.console import Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from cirulla.solver.cards import CARD_CODE, RANKS, Card, ordered
from cirulla.solver.events import CATEGORIES, HandEnd
from cirulla.solver.i18n import N_, Translations, translator, whole
from cirulla.solver.moves import Move
from cirulla.v1 import engine_service_pb2 as epb

if TYPE_CHECKING:                   # (`cirulla play` draws without loading the analysis)
    from cirulla.solver.analysis import Decision, Summary

_STYLE = ("bold red", "red", "bold", "bold")        # D H C S: red suits red
JUDGEMENT_STYLE = {"inaccuracy": "yellow", "mistake": "dark_orange", "blunder": "bold red"}
GRADE_WORDS = {"inaccuracy": N_("inaccuracy"), "mistake": N_("mistake"), "blunder": N_("blunder")}
ERROR_KIND_WORDS = {"gave_scopa": N_("gave a scopa"), "missed_capture": N_("missed a capture"),
                    "declaration": N_("declaration"), "lost_race": N_("lost a race"),
                    "over_captured": N_("took too much"), "other": N_("other")}
# the scoring categories (events.CATEGORIES) as a table's rows name them
CATEGORY_NAMES = {"scope": N_("scope"), "declarations": N_("declarations"), "cards": N_("cards"),
                  "diamonds": N_("diamonds"), "settebello": N_("settebello"), "primiera": N_("primiera"),
                  "grande": N_("grande"), "piccola": N_("piccola"), "re_bello": N_("re bello")}
# how the engine found a hint, in a player's words (the caption of its table); the
# searches that sample say how many playouts, the others only their time
METHOD_WORDS = {epb.SEARCH_METHOD_ISMCTS: N_("search"), epb.SEARCH_METHOD_FLAT: N_("simple search"),
                epb.SEARCH_METHOD_EXACT: N_("solved exactly"), epb.SEARCH_METHOD_FORCED: N_("the only move")}
SAMPLED_METHODS = (epb.SEARCH_METHOD_ISMCTS, epb.SEARCH_METHOD_FLAT)
MATTA_MARK = "[bold yellow]*[/]"    # after the matta (the wild card): 7♥*
PLAYED_STYLE = "underline"          # a position's cards the played move uses
BEST_STYLE = "on dark_green"        # ... the best move uses


def card(c: Card, matta: Card | None = None, style: str = "") -> str:
    """A card with its suit symbol, red suits red; the matta marked with a star."""
    text = f"[{_STYLE[c.suit]}{' ' + style if style else ''}]{c.symbol}[/]"
    return text + MATTA_MARK if matta is not None and c == matta else text


def cards(cs: Iterable[Card], matta: Card | None = None, styles: dict[Card, str] | None = None) -> str:
    cs = ordered(cs)
    styles = styles or {}
    return " ".join(card(c, matta, styles.get(c, "")) for c in cs) if cs else "[dim]—[/]"


def move(m: Move, tr: Translations | None = None, matta: Card | None = None) -> str:
    tr = tr or translator()
    _ = tr.gettext
    if m.card is None:                      # a declaration
        return tr.pgettext("move", "declare") + f" {cards(m.declared, matta)}" + \
            (f" + {cards(m.declared_second, matta)}" if m.declared_second else "") + \
            (" " + _("(matta as %(rank)s)") % {"rank": RANKS[m.matta_as]} if m.matta_as is not None else "") + \
            f"  [green]+{m.points}[/]"
    if not m.captured:
        return _("%(card)s [dim]on the table[/]") % {"card": card(m.card, matta)}
    return _("%(card)s takes %(cards)s") % {"card": card(m.card, matta), "cards": cards(m.captured, matta)}


def move_text(text: str, matta: Card | None = None, tr: Translations | None = None) -> str:
    """A move's text form ("7C x 2C 5S") with suit symbols and colour; with
    `tr`, a declaration's word in the reader's language ("dichiara 2♠ 5♣ 7♥=A")."""
    if tr is not None and text.startswith("declare "):
        text = tr.pgettext("move", "declare") + text.removeprefix("declare")
    def one(m: re.Match[str]) -> str:
        return card(Card.parse(m.group(0)), matta)
    return CARD_CODE.sub(one, text.replace(" x ", " × "))


def prose(text: str, matta: Card | None = None) -> Text:
    """A reason as a player reads it: its card codes ("3C x 4S JS takes 4S
    JS", R-CODE, as the service sends them) drawn as cards, with suit symbols
    in their colours, as the tables and the pages draw them (an Italian
    reader would take the C of 3C for cuori); the rest as it is."""
    return Text.from_markup(move_text(escape(text), matta))


def grade_count(grade: str, count: int, tr: Translations) -> str:
    """A grade as a count of them names it: "1 blunder", "2 blunders" (without the number)."""
    if grade == "inaccuracy":
        return tr.npgettext("count", "inaccuracy", "inaccuracies", count)
    if grade == "mistake":
        return tr.npgettext("count", "mistake", "mistakes", count)
    return tr.npgettext("count", "blunder", "blunders", count)


def goal(hands: int | None, target: int, tr: Translations) -> str:
    """What ends the match: "2 hands", "to 51"."""
    if hands:
        return tr.ngettext("%(count)s hand", "%(count)s hands", hands) % {"count": hands}
    return tr.gettext("to %(target)s") % {"target": target}


def hand_end_table(end: HandEnd, side_names: list[str], tr: Translations | None = None) -> Table:
    _ = (tr or translator()).gettext
    t = Table(title=_("Hand %(hand)s") % {"hand": end.hand + 1}, show_lines=False)
    t.add_column("")
    for name in side_names:
        t.add_column(escape(name), justify="right")
    for cat in CATEGORIES:
        values = [getattr(s, cat) for s in end.sides]
        if any(values):
            t.add_row(_(CATEGORY_NAMES[cat]), *map(str, values))
    t.add_row(styled("bold", _("hand")), *(styled("bold", str(s.total)) for s in end.sides))
    t.add_row(styled("bold", _("match")), *(styled("bold", str(s.match_total)) for s in end.sides))
    return t


# --- hints ---------------------------------------------------------------------

def hint_table(hint: epb.Hint, *, title: str = "", limit: int | None = None,
               numbers: dict[str, int] | None = None, tr: Translations | None = None,
               matta: Card | None = None) -> Table:
    """A cirulla.v1.Hint: every move ranked with the search's figures. With
    `numbers` (move text -> its number in the menu) the # column shows the
    number to type, else the rank; the matta (the rules') marked."""
    tr = tr or translator()
    _ = tr.gettext
    stats = hint.stats
    by_win = hint.ranked_by == epb.RANKED_BY_WIN_CHANCE
    spent = {"method": _(METHOD_WORDS.get(stats.method, METHOD_WORDS[epb.SEARCH_METHOD_ISMCTS])),
             "playouts": whole(stats.iterations, tr), "ms": f"{stats.elapsed_ms:.0f}"}
    how = (_("%(method)s, %(playouts)s playouts, %(ms)s ms") if stats.method in SAMPLED_METHODS
           else _("%(method)s, %(ms)s ms")) % spent
    caption = ((_("%(how)s; ranked by the chance of winning the match") if by_win
                else _("%(how)s; ranked by expected points")) % {"how": how}
               + (" " + styled("yellow", _("(cut short)")) if hint.cut_short else ""))
    t = Table(title=title or None, caption=caption, caption_justify="left")
    t.add_column("#", justify="right")
    t.add_column(_("move"))
    t.add_column(_("expected"), justify="right")
    t.add_column(_("vs best"), justify="right")
    has_win = any(m.HasField("win_chance") for m in hint.moves)
    if has_win:
        t.add_column(_("win"), justify="right")
    t.add_column(_("scopa risk"), justify="right")
    t.add_column(_("samples"), justify="right")
    moves = list(hint.moves)[:limit] if limit else hint.moves
    for i, m in enumerate(moves, 1):
        row = [str(numbers.get(m.move.text, "") if numbers else i), move_text(m.move.text, matta, tr),
               f"{m.expected_points:+.2f} ± {m.expected_points_stderr:.2f}",
               styled("dim", _("best")) if i == 1 else f"{m.diff_to_best:+.2f} ± {m.diff_to_best_stderr:.2f}"]
        if has_win:
            row.append(f"{100 * m.win_chance:.1f} %" if m.HasField("win_chance") else "")
        row += [f"{100 * m.scopa_risk:.0f} %", whole(m.samples, tr)]
        t.add_row(*row, style="bold" if i == 1 else None)
    return t


def hint(hint: epb.Hint, *, title: str = "", limit: int | None = None, numbers: dict[str, int] | None = None,
         tr: Translations | None = None, matta: Card | None = None) -> Group:
    """A cirulla.v1.Hint's table (hint_table), then the reasons of its top
    moves, each by its number in the table."""
    _ = (tr or translator()).gettext
    why = Table.grid(padding=(0, 1))
    why.add_column(style="dim", no_wrap=True)
    why.add_column(justify="right", no_wrap=True)
    why.add_column()
    moves = list(hint.moves)[:limit] if limit else list(hint.moves)
    for i, m in enumerate(moves, 1):
        if m.reason:
            why.add_row("" if why.row_count else _("why"), str(numbers.get(m.move.text, "") if numbers else i),
                        prose(m.reason, matta))
    table = hint_table(hint, title=title, limit=limit, numbers=numbers, tr=tr, matta=matta)
    return Group(table, why) if why.row_count else Group(table)


# --- analyses ------------------------------------------------------------------

def _signed(x: float, digits: int = 2) -> str:
    return f"{x:+.{digits}f}"


def result_digits(result: float) -> int:
    """The decimals a side's result is shown with: none for whole points (the
    hands played out), two where an unfinished hand counts at its value."""
    return 0 if result == round(result) else 2


def judgement(name: str | None, forced: bool = False, tr: Translations | None = None) -> str:
    _ = (tr or translator()).gettext
    if forced:
        return styled("dim", _("forced"))
    if name is None:
        return ""
    return styled(JUDGEMENT_STYLE[name], _(GRADE_WORDS[name]))


def players_table(summary: Summary, tr: Translations | None = None) -> Table:
    """A column per player (narrow terminals fit four players)."""
    _ = (tr or translator()).gettext
    t = Table(title=_("Players"))
    t.add_column("")
    for p in summary.players:
        t.add_column(escape(p.name), justify="right")
    ps = summary.players
    rows = ((_("accuracy (0-100)"), [f"[bold]{p.accuracy:.1f}[/]" for p in ps]),
            (_("decisions (forced)"), [f"{p.decisions} ({p.forced})" for p in ps]),
            (_("inaccuracies"), [f"[{JUDGEMENT_STYLE['inaccuracy']}]{p.inaccuracies}[/]" for p in ps]),
            (_("mistakes"), [f"[{JUDGEMENT_STYLE['mistake']}]{p.mistakes}[/]" for p in ps]),
            (_("blunders"), [f"[{JUDGEMENT_STYLE['blunder']}]{p.blunders}[/]" for p in ps]),
            (_("points lost by errors"), [f"{p.loss:.2f}" for p in ps]),
            (_("... per unforced decision"), [f"{p.average_loss:.3f}" for p in ps]),
            (_("lost against perfect knowledge"), [f"{p.hindsight_loss:.1f}" for p in ps]),
            (_("... by the best moves it could see"), [f"{p.unavoidable_loss:.1f}" for p in ps]))
    for label, cells in rows:
        t.add_row(label, *cells)
    return t


def sides_table(summary: Summary, tr: Translations | None = None) -> Table:
    _ = (tr or translator()).gettext
    t = Table(title=_("Where the result came from (points)"),
              caption=_("result = dealer's edge + luck of the deals + hidden luck (the cards the others held) "
                        "+ play (errors) + noise (the evaluation's)"),
              caption_justify="left")
    for i, name in enumerate((_("side"), _("result"), _("dealer's edge"), _("luck"), _("hidden luck"), _("play"),
                              _("noise"))):
        t.add_column(name, justify="left" if i == 0 else "right")
    for s in summary.sides:
        t.add_row(escape(s.name), f"[bold]{_signed(s.result, result_digits(s.result))}[/]", _signed(s.start),
                  _signed(s.luck), _signed(s.hidden_luck), _signed(s.play), _signed(s.noise))
    return t


def luck_table(summary: Summary, side_names: Sequence[str], tr: Translations | None = None) -> Table:
    """The luck of every deal for side 0, a row per hand."""
    _ = (tr or translator()).gettext
    rounds = max((d.round for d in summary.deals), default=0) + 1
    t = Table(title=_("Luck of each deal, for %(side)s (points of expected margin)") % {"side": escape(side_names[0])})
    t.add_column(_("hand"), justify="right")
    for r in range(rounds):
        t.add_column(_("round %(round)s") % {"round": r + 1}, justify="right")
    t.add_column(_("hand total"), justify="right")
    for hand in sorted({d.hand for d in summary.deals}):
        row = [""] * rounds
        deals = [d for d in summary.deals if d.hand == hand]
        for d in deals:
            style = "green" if d.luck > 0.5 else "red" if d.luck < -0.5 else "dim"
            row[d.round] = f"[{style}]{d.luck:+.2f}[/]"
        t.add_row(str(hand + 1), *row, f"[bold]{sum(d.luck for d in deals):+.2f}[/]")
    return t


def decisions_table(decisions: Sequence[Decision], names: Sequence[str], *, only_errors: bool = True,
                    tr: Translations | None = None, matta: Card | None = None) -> Table:
    """A row per error (or per decision). A row stacks its moves (played, best,
    the best seeing every card) in one column and its grade over its kind in
    another, so that 80 columns show every move whole; the matta starred."""
    tr = tr or translator()
    _ = tr.gettext
    shown = [d for d in decisions if d.judgement or not only_errors]
    has_win = any(d.win_chance_loss is not None for d in shown)
    t = Table(title=(_("Errors (%(count)s)") if only_errors else _("Every decision (%(count)s)"))
              % {"count": len(shown)},
              caption=_("h.r: hand.round; seeing all: the best move had every card been visible (what the played "
                        "one lost by it); lost: expected points (± standard error)")
                      + (_("; win: the change in the chance of winning the match") if has_win else "")
                      + _("; under a judgement, what the error did (its position, below, says it in words)"),
              caption_justify="left")
    t.add_column("#", justify="right", no_wrap=True)
    t.add_column(_("h.r"), justify="right", no_wrap=True)
    t.add_column(_("player"), overflow="fold")
    t.add_column(_("moves"))
    t.add_column(_("lost"), justify="right", no_wrap=True)
    t.add_column(_("judgement"))
    labels = {"played": _("played"), "best": _("best"), "seeing all": _("seeing all")}
    for d in shown:
        same = d.forced or d.played == d.best
        moves = Table.grid(padding=(0, 1))
        moves.add_column(style="dim", no_wrap=True, min_width=max(map(len, labels.values())))    # one indent in all
        moves.add_column()
        moves.add_row(labels["played"], move_text(str(d.played), matta, tr))
        if not same:
            moves.add_row(labels["best"], move_text(str(d.best), matta, tr))
        if not d.forced:
            moves.add_row(labels["seeing all"], move_text(str(d.hindsight_best), matta, tr)
                          + (f" ({d.hindsight_loss:.2f})" if d.hindsight_loss > 0.005 else ""))
        lost = "" if same else f"{d.loss:.2f}±{d.loss_stderr:.2f}"
        if has_win and not same and d.win_chance_loss is not None:
            lost += "\n" + _("win %(change)s") % {"change": f"{-100 * d.win_chance_loss:+.1f}%"}
        grade = judgement(d.judgement, d.forced, tr)
        if d.kind:
            grade += "\n" + styled("dim", _(ERROR_KIND_WORDS[d.kind]) if d.kind in ERROR_KIND_WORDS else d.kind)
        t.add_row(str(d.number + 1), f"{d.hand + 1}.{d.round + 1}", escape(names[d.seat]), moves, lost, grade)
    return t


def position(d: Decision, names: Sequence[str], side_names: Sequence[str], matta: Card | None = None,
             tr: Translations | None = None) -> Panel:
    """A decision's position as the seat saw it: the table, its hand, the
    cards it had not seen, the scores; the played and the best move's cards
    marked (underlined: played; on green: best), the matta starred, and why
    an error lost."""
    from cirulla.solver.analysis import explain
    tr = tr or translator()
    _ = tr.gettext
    p = d.position
    same = d.forced or d.played == d.best
    names, side_names = [escape(n) for n in names], [escape(n) for n in side_names]     # the players' text

    def styles(cs: Iterable[Card], played: set[Card], best: set[Card]) -> dict[Card, str]:
        out = {}
        for c in cs:
            words = [w for w, on in ((PLAYED_STYLE, c in played), (BEST_STYLE, c in best)) if on]
            if words:
                out[c] = " ".join(words)
        return out

    own, taken = _move_cards(d.played)
    best_own, best_taken = _move_cards(d.best) if not same else (set(), set())
    g = Table.grid(padding=(0, 2))
    g.add_column(style="dim", no_wrap=True)
    g.add_column()
    g.add_row(_("table"), cards(p.table, matta, styles(p.table, taken, best_taken)))
    g.add_row(tr.pgettext("held cards", "hand"), cards(p.hand, matta, styles(p.hand, own, best_own)))
    g.add_row(_("unseen (%(count)s)") % {"count": len(p.unseen)}, cards(p.unseen, matta))
    score = " – ".join(f"{n} {s}" for n, s in zip(side_names, p.scores, strict=False))
    hand = " – ".join(str(x) for x in p.hand_points)
    held = ", ".join(tr.ngettext("%(player)s holds %(count)s card", "%(player)s holds %(count)s cards", n)
                     % {"player": names[s], "count": n} for s, n in enumerate(p.hand_sizes) if s != d.seat)
    g.add_row(_("score"), _("%(score)s; this hand %(hand)s") % {"score": score, "hand": hand}
              + (f"; {held}" if held else ""))
    risk = _("scopa risk %(risk)s")
    note = "" if d.forced else ("  " + styled("dim", "(" + _("the best move") + ")") if same else "") + \
        "  " + styled("dim", risk % {"risk": f"{100 * d.played_scopa_risk:.0f} %"})
    g.add_row(_("played"), move_text(str(d.played), matta, tr) + note)
    if not same:
        lost = _("lost %(loss)s ± %(stderr)s") % {"loss": f"{d.loss:.2f}", "stderr": f"{d.loss_stderr:.2f}"}
        g.add_row(_("best"), move_text(str(d.best), matta, tr) + "  "
                  + styled("dim", risk % {"risk": f"{100 * d.best_scopa_risk:.0f} %"}) + "  " + lost)
    if d.judgement:
        g.add_row(_("why"), prose(explain(d, tr), matta))
    title = (_("#%(number)s · hand %(hand)s, round %(round)s · %(player)s")
             % {"number": d.number + 1, "hand": d.hand + 1, "round": d.round + 1, "player": names[d.seat]}
             + (" · " + judgement(d.judgement, d.forced, tr) if d.judgement or d.forced else ""))
    return Panel(g, title=title, title_align="left", expand=False)


def positions(decisions: Sequence[Decision], names: Sequence[str], side_names: Sequence[str],
              matta: Card | None = None, tr: Translations | None = None) -> Group:
    """The position of each of `decisions`, with a key to the marks."""
    tr = tr or translator()
    _ = tr.gettext
    key = ("[dim]" + _("%(underlined)s: the played move's cards; %(on_green)s: the best move's")
           % {"underlined": styled(PLAYED_STYLE, _("underlined")), "on_green": styled(BEST_STYLE, _("on green"))}
           + ("; " + _("%(matta)s: the matta (wild card)") % {"matta": card(matta, matta)} if matta is not None else "")
           + "[/]")
    return Group(Text.from_markup(_("[bold]Positions[/] (%(count)s)") % {"count": len(decisions)} + "  " + key),
                 *(position(d, names, side_names, matta, tr) for d in decisions))


def styled(style: str, text: str) -> str:
    """Text in a rich style: styled("dim", "best") is "[dim]best[/]"."""
    return f"[{style}]{text}[/]"


def _move_cards(m: Move) -> tuple[set[Card], set[Card]]:
    """The cards a move uses from the hand, and those it takes from the table."""
    own = {m.card} if m.card is not None else {*m.declared, *m.declared_second}
    return own, set(m.captured)
