"""`cirulla play`: a match against engine players in the terminal.

Reads one command per line from standard input, so it can be driven by a
pipe as well as by a person: a move's number or text, `hint`, `undo`,
`help` or `quit`. The record is saved when the match ends and on quit.
Everything it says is in the player's language (--lang); the commands and
the moves' text form (7C x 2C 5S) work in every language, beside the
commands' words and the menu's words for a move in the player's own.
"""
from __future__ import annotations

import re
import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TextIO

from rich.console import Console, RenderableType
from rich.markup import escape
from rich.text import Text

from cirulla.solver import record
from cirulla.solver.cards import Card
from cirulla.solver.errors import CirullaError
from cirulla.solver.events import Deal, HandEnd, Turn
from cirulla.solver.i18n import Translations, translator
from cirulla.solver.match import Match
from cirulla.solver.moves import Move
from cirulla.solver.players import Player

from . import render


def command_names(tr: Translations) -> dict[str, str]:
    """What a player types besides a move: each command's word in the player's
    language, by its own (English) one, which works too."""
    return {"help": tr.pgettext("command", "help"), "hint": tr.pgettext("command", "hint"),
            "undo": tr.pgettext("command", "undo"), "quit": tr.pgettext("command", "quit")}


def command_words(tr: Translations) -> dict[str, str]:
    """Each command by the words that call it."""
    return {word.casefold(): c for c, own in command_names(tr).items() for word in (c, own)}


def help_text(tr: Translations) -> str:
    return tr.gettext("Commands: a move's number or its text (7C x 2C 5S, 7C, declare 2S 5C 7H=A),\n"
                      "%(hint)s (the engine's ranking of your moves), %(undo)s (take back your last move), "
                      "%(quit)s (save and stop).") % command_names(tr)


@lru_cache(maxsize=4)
def _menu_words(tr: Translations) -> tuple[re.Pattern[str], dict[str, str]]:
    words = {"×": " x "}                       # the hint table's sign
    for t in (tr, translator("en")):
        takes = t.gettext("%(card)s takes %(cards)s") % {"card": "", "cards": ""}
        on_table = Text.from_markup(t.gettext("%(card)s [dim]on the table[/]") % {"card": ""}).plain
        words.update({takes.strip().casefold(): " x ", on_table.strip().casefold(): " ",
                      t.pgettext("move", "declare").casefold(): "declare "})
    alternatives = (rf"(?<!\w){re.escape(w)}(?!\w)" for w in sorted(words, key=len, reverse=True) if w)
    return re.compile("|".join(alternatives), re.IGNORECASE), words


def move_in_menu_words(answer: str, tr: Translations) -> str:
    """A move typed as the menu writes it, in the player's language or in
    English ("6♦ prende 2♠ 4♠", "5♣ sul tavolo", "dichiara 6D 6H 7H=6", the hint
    table's "×"), in the text form that Move.of reads ("6D x 2S 4S")."""
    pattern, words = _menu_words(tr)
    return pattern.sub(lambda m: words[m.group(0).casefold()], answer)


def seat_names(players: int, human: str | None, tr: Translations) -> list[str]:
    """The players' names: the human's (by default "You") at seat 0, then the
    engines' ("Engine 1", ...; "Partner" facing the human at a table of four)."""
    _ = tr.gettext
    return [human or _("You")] + [_("Partner") if players == 4 and seat == 2 else _("Engine %(seat)s") % {"seat": seat}
                                  for seat in range(1, players)]


def local_hint(*, time_ms: float | None = None, seed: int = 0,
               tr: Translations | None = None) -> Callable[[Match], RenderableType]:
    """The `hint` command: the search on the human's view (the default budget,
    or at most `time_ms`), as a table, with the reasons of the top moves."""
    from cirulla.server.convert import hint_to_proto
    from cirulla.solver.search import SearchBudget, search
    tr = tr or translator()

    def hint(match: Match) -> RenderableType:
        view = match.view(match.to_move)
        result = search(view, SearchBudget.of(time_ms=time_ms, seed=seed))
        menu = {str(m): i for i, m in enumerate(match.legal_moves, 1)}   # the numbers the menu shows
        return render.hint(hint_to_proto(result, seed, table=view.table, tr=tr),
                           title=tr.gettext("The engine's ranking of your moves (# as in the menu)"),
                           numbers=menu, tr=tr, matta=match.rules.matta_card)
    return hint


def hand_points_line(m: Match, tr: Translations | None = None) -> str:
    """The points each side has won so far in this hand, as they happen:
    'This hand: You 3 (1 scopa, 2 from declarations) – Engine 0'."""
    tr = tr or translator()
    parts = []
    for name, points in zip(map(escape, m.side_names), m.hand_points(), strict=False):
        scope, declared = points["scope"], points["declarations"]
        detail = ", ".join(w for w in (
            tr.ngettext("%(count)s scopa", "%(count)s scope", scope) % {"count": scope} if scope else "",
            tr.gettext("%(points)s from declarations") % {"points": declared} if declared else "") if w)
        parts.append(f"{name} [bold]{scope + declared}[/]" + (f" ({detail})" if detail else ""))
    return tr.gettext("This hand: %(points)s") % {"points": " – ".join(parts)}


class Game:
    def __init__(self, match: Match, human: int, opponents: dict[int, Player], *,
                 console: Console, save_to: Path, hint: Callable[[Match], RenderableType] | None = None,
                 stdin: TextIO = sys.stdin, level: str = "", tr: Translations | None = None):
        self.match, self.human, self.opponents = match, human, opponents
        self.console, self.save_to, self.hint, self.stdin = console, save_to, hint, stdin
        self.level = level
        self.tr = tr or translator()
        self._shown = 0

    @property
    def matta(self) -> Card | None:
        """The rules' wild card, marked with a star wherever a card is drawn."""
        return self.match.rules.matta_card

    def run(self) -> int:
        """Play to the end of the match, or to `quit` or the end of the input;
        the record is saved in every case (Ctrl-C included)."""
        try:
            return self._run()
        except KeyboardInterrupt:
            self.console.print()
            self._save("interrupt")
            raise
        except BaseException:
            record.save(self.match, self.save_to)      # e.g. the terminal went away: keep the game
            raise

    @property
    def _names(self) -> list[str]:
        """The seats' names as the text shows them: a name is the player's own
        text, never markup (a record keeps it as given)."""
        return [escape(n) for n in self.match.names]

    @property
    def _sides(self) -> list[str]:
        return [escape(n) for n in self.match.side_names]

    def _you(self, seat: int) -> bool:
        """Whether the text addresses the seat as "you": the human under the default name."""
        return seat == self.human and self.match.names[seat] == self.tr.gettext("You")

    def _run(self) -> int:
        m, say, tr = self.match, self.console.print, self.tr
        _, commands = tr.gettext, command_words(tr)
        r = m.rules
        names = self._names
        partner = [names[s] for s in range(r.players) if s != self.human and r.side_of(s) == r.side_of(self.human)]
        facts = {"rules": r.name, "players": r.players, "goal": render.goal(r.hands, r.target, self.tr),
                 "level": _(self.level) if self.level else "", "name": names[self.human], "seat": self.human,
                 "partner": partner[0] if partner else ""}
        say(" ".join(filter(None, (
            (_("[bold]Cirulla[/] — %(rules)s, %(players)s players, %(goal)s, engines at level %(level)s.") if self.level
             else _("[bold]Cirulla[/] — %(rules)s, %(players)s players, %(goal)s.")) % facts,
            ((_("You play at seat %(seat)s, partnered with %(partner)s.") if partner
              else _("You play at seat %(seat)s.")) if self._you(self.human) else
             _("You are %(name)s (seat %(seat)s), partnered with %(partner)s.") if partner
             else _("You are %(name)s (seat %(seat)s).")) % facts,
            _("The matta (the wild card) is %(card)s.") % {"card": render.card(self.matta, self.matta)}
            if self.matta else "",
            _("Type [bold]%(help)s[/] for commands.") % command_names(tr)))))
        while not m.is_over:
            self._show_events()
            if m.to_move != self.human:
                m.play(self.opponents[m.to_move].choose(m))
                continue
            self._show_position()
            moves = m.legal_moves
            for i, mv in enumerate(moves, 1):
                say(f"  [bold]{i:2}[/]  {render.move(mv, self.tr, self.matta)}   [dim]{mv}[/]")
            answer = self._ask()
            command = commands.get(answer.casefold()) if answer is not None else "quit"
            if command == "quit":
                self._save("quit")
                return 0
            if command == "help":
                say(help_text(self.tr))
            elif command == "hint":
                say(self.hint(m) if self.hint else render.styled("yellow", _("no hint engine available")))
            elif command == "undo":
                self._undo()
            else:
                self._play(answer or "", moves)
        self._show_events()
        winner = m.winner
        names = self._sides
        if winner is None:
            say(_("[bold]The match is over: a tie at %(score)s.[/]") % {"score": m.scores[0]})
        else:
            scores = {"side": names[winner], "score": m.scores[winner],
                      "other": max(s for i, s in enumerate(m.scores) if i != winner)}
            if self.match.side_names[winner] == _("You"):
                say(_("[bold]The match is over: you win %(score)s to %(other)s.[/]") % scores)
            elif r.n_sides < r.players:          # partners
                say(_("[bold]The match is over: %(side)s win %(score)s to %(other)s.[/]") % scores)
            else:
                say(_("[bold]The match is over: %(side)s wins %(score)s to %(other)s.[/]") % scores)
        self._save("end")
        return 0

    def _ask(self) -> str | None:
        self.console.print("[bold]>[/] ", end="")
        line = self.stdin.readline()
        if not line:
            self.console.print()
            return None                                   # end of input: save and stop
        return line.strip()

    def _play(self, answer: str, moves: list[Move]) -> None:
        """The player's move, by its number or its text; else why not, in the
        player's language (their own text escaped: it is not markup)."""
        m, _ = self.match, self.tr.gettext
        if answer.isascii() and answer.isdigit():       # (isdigit alone takes "²", which int() does not)
            if not 1 <= int(answer) <= len(moves):
                return self._refuse(_("there is no move %(n)s: the moves are 1 to %(last)s")
                                    % {"n": answer, "last": len(moves)})
            move = moves[int(answer) - 1]
        else:
            try:
                move = Move.of(move_in_menu_words(answer, self.tr), matta=m.rules.matta_card)
            except CirullaError:
                return self._refuse(_("%(text)s is not a move: type its number (1 to %(last)s), or the move "
                                      "as the list writes it after the number, like 7C x 2C 5S")
                                    % {"text": repr(answer), "last": len(moves)})
        why = m.why_illegal(move, tr=self.tr)
        if why is not None:
            return self._refuse(why)
        m.play(move)

    def _refuse(self, why: str) -> None:
        self.console.print(render.styled("red", escape(why)))

    def _undo(self) -> None:
        m = self.match
        # take back to before the human's last move (and the engines' replies)
        mine = [i for i, e in enumerate(m.events) if isinstance(e, Turn) and e.seat == self.human]
        if not mine:
            self.console.print(render.styled("yellow", self.tr.gettext("nothing of yours to undo")))
            return
        while len(m.events) > mine[-1]:
            m.undo()
        self._shown = min(self._shown, len(m.events))

    def _show_position(self) -> None:
        m, say, tr = self.match, self.console.print, self.tr
        _ = tr.gettext
        v = m.view(self.human)
        names, sides = self._names, self._sides
        say("")
        say(_("Score: %(scores)s") % {"scores": "   ".join(f"{n} {s}" for n, s in zip(sides, m.scores, strict=False))}
            + "   [dim]" + _("hand %(hand)s, round %(round)s, dealer %(dealer)s, stock %(stock)s")
            % {"hand": m.hand_number + 1, "round": m.round + 1, "dealer": names[m.dealer], "stock": v.stock_size}
            + "[/]")
        say(hand_points_line(m, tr))
        for seat in range(m.rules.players):
            if seat != self.human and v.public[seat]:
                say("  " + _("%(player)s declared: %(cards)s") % {"player": names[seat],
                                                                  "cards": render.cards(v.public[seat], self.matta)})
        say(_("Table: %(cards)s") % {"cards": render.cards(v.table, self.matta)})
        say(_("Your hand: %(cards)s") % {"cards": render.cards(v.hand, self.matta)})

    def _show_events(self) -> None:
        m, say, tr = self.match, self.console.print, self.tr
        _ = tr.gettext
        names, sides = self._names, self._sides
        for e in m.events[self._shown:]:
            if isinstance(e, Deal):
                if e.void:
                    say("[dim]" + _("Void deal (two aces on the table: %(cards)s); dealt again.")
                        % {"cards": render.cards(e.table, self.matta)} + "[/]")
                elif e.round == 0:
                    deal = {"hand": e.hand + 1, "player": names[e.dealer], "cards": render.cards(e.table, self.matta),
                            "total": 30 if e.dealer_scope == 2 else 15, "count": e.dealer_scope}
                    you = self._you(e.dealer)
                    say("\n" + (_("[bold]Hand %(hand)s[/], you deal. Table: %(cards)s") if you
                                else _("[bold]Hand %(hand)s[/], %(player)s deals. Table: %(cards)s")) % deal)
                    if e.dealer_scope:
                        say("  " + (tr.ngettext("The table adds up to %(total)s: you take it, %(count)s scopa.",
                                                "The table adds up to %(total)s: you take it, %(count)s scope.",
                                                e.dealer_scope) if you else
                                    tr.ngettext("The table adds up to %(total)s: %(player)s takes it, %(count)s scopa.",
                                                "The table adds up to %(total)s: %(player)s takes it, %(count)s scope.",
                                                e.dealer_scope)) % deal)
                    if e.capotun:
                        say("  " + _("Four of a kind on the table: %(player)s's side wins the match.") % deal)
            elif isinstance(e, Turn):
                say(f"  {names[e.seat]}: {render.move(e.move, tr, self.matta)}"
                    + ("  " + render.styled("bold yellow", _("SCOPA!")) if e.scopa else ""))
            elif isinstance(e, HandEnd):
                if e.leftover:
                    who = _("nobody") if e.leftover_side is None else sides[e.leftover_side]
                    left = render.cards(e.leftover, self.matta)
                    say("  " + _("Left on the table: %(cards)s → %(side)s") % {"cards": left, "side": who})
                say(render.hand_end_table(e, self.match.side_names, tr))
                if e.cappotto_side is not None:
                    say(_("[bold]Cappotto! %(side)s took all ten diamonds.[/]")
                        % {"side": sides[e.cappotto_side]})
        self._shown = len(m.events)

    def _save(self, why: str) -> None:
        record.save(self.match, self.save_to)
        _ = self.tr.gettext
        self.console.print(_("Record saved to %(file)s") % {"file": escape(str(self.save_to))}
                           + (" — " + _("analyse it with: %(command)s")
                              % {"command": escape(f"cirulla analyze {self.save_to} --html report.html")}
                              if why == "end" else ""), soft_wrap=True)
