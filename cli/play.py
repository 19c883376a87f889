"""`cirulla play`: a match against engine players in the terminal.

Reads one command per line from standard input, so it can be driven by a
pipe as well as by a person: a move's number or text, `hint`, `undo`,
`help` or `quit`. The record is saved when the match ends and on quit.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from rich.console import Console, RenderableType

from cirulla.solver import record
from cirulla.solver.errors import CirullaError
from cirulla.solver.events import Deal, HandEnd, Turn
from cirulla.solver.match import Match
from cirulla.solver.moves import Move
from cirulla.solver.players import Player

from . import render

HELP = """Commands: a move's number or its text (7C x 2C 5S, 7C, declare 2S 5C 7H=A),
hint (the engine's ranking of your moves), undo (take back your last move), quit (save and stop)."""


def local_hint(*, time_ms: float | None = None, seed: int = 0) -> Callable[[Match], RenderableType]:
    """The `hint` command: the search on the human's view (the default budget,
    or at most `time_ms`), as a table."""
    from cirulla.server.convert import hint_to_proto
    from cirulla.solver.search import SearchBudget, search

    def hint(match: Match) -> RenderableType:
        result = search(match.view(match.to_move), SearchBudget.of(time_ms=time_ms, seed=seed))
        menu = {str(m): i for i, m in enumerate(match.legal_moves, 1)}   # the numbers the menu shows
        return render.hint_table(hint_to_proto(result, seed),
                                 title="The engine's ranking of your moves (# as in the menu)",
                                 numbers=menu)
    return hint


def hand_points_line(m: Match) -> str:
    """The points each side has won so far in this hand, as they happen:
    'This hand: You 3 (1 scopa, 2 from declarations) – Engine 0'."""
    parts = []
    for name, points in zip(m.side_names, m.hand_points(), strict=False):
        scope, declared = points["scope"], points["declarations"]
        detail = ", ".join(w for w in ((f"{scope} scop{'a' if scope == 1 else 'e'}" if scope else ""),
                                       (f"{declared} from declarations" if declared else "")) if w)
        parts.append(f"{name} [bold]{scope + declared}[/]" + (f" ({detail})" if detail else ""))
    return "This hand: " + " – ".join(parts)


class Game:
    def __init__(self, match: Match, human: int, opponents: dict[int, Player], *,
                 console: Console, save_to: Path, hint: Callable[[Match], RenderableType] | None = None,
                 stdin: TextIO = sys.stdin, level: str = ""):
        self.match, self.human, self.opponents = match, human, opponents
        self.console, self.save_to, self.hint, self.stdin = console, save_to, hint, stdin
        self.level = level
        self._shown = 0

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

    def _verb(self, seat: int, verb: str) -> str:
        """'You deal', 'Engine 1 deals'."""
        return verb if seat == self.human and self.match.names[seat] == "You" else verb + "s"

    def _run(self) -> int:
        m, say = self.match, self.console.print
        r = m.rules
        goal = f"{r.hands} hand{'s' if r.hands > 1 else ''}" if r.hands else f"to {r.target}"
        partner = [m.names[s] for s in range(r.players) if s != self.human and r.side_of(s) == r.side_of(self.human)]
        say(f"[bold]Cirulla[/] — {r.name}, {r.players} players, {goal}"
            + (f", engines at level {self.level}" if self.level else "") + ". "
            f"You are {m.names[self.human]} (seat {self.human})" + (f", partnered with {partner[0]}" if partner else "")
            + ". Type [bold]help[/] for commands.")
        while not m.is_over:
            self._show_events()
            if m.to_move != self.human:
                m.play(self.opponents[m.to_move].choose(m))
                continue
            self._show_position()
            moves = m.legal_moves
            for i, mv in enumerate(moves, 1):
                say(f"  [bold]{i:2}[/]  {render.move(mv)}   [dim]{mv}[/]")
            answer = self._ask()
            if answer is None or answer == "quit":
                self._save("quit")
                return 0
            if answer == "help":
                say(HELP)
            elif answer == "hint":
                say(self.hint(m) if self.hint else "[yellow]no hint engine available[/]")
            elif answer == "undo":
                self._undo()
            else:
                self._play(answer, moves)
        self._show_events()
        winner = m.winner
        names = self.match.side_names
        if winner is None:
            say(f"[bold]The match is over: a tie at {m.scores[0]}.[/]")
        else:
            verb = "win" if "&" in names[winner] or names[winner] == "You" else "wins"
            say(f"[bold]The match is over: {names[winner]} {verb} {m.scores[winner]} to "
                f"{max(s for i, s in enumerate(m.scores) if i != winner)}.[/]")
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
        m = self.match
        try:
            move = moves[int(answer) - 1] if answer.isdigit() and 1 <= int(answer) <= len(moves) else answer
            m.play(move)
        except CirullaError as e:
            self.console.print(f"[red]{e}[/]")

    def _undo(self) -> None:
        m = self.match
        # take back to before the human's last move (and the engines' replies)
        mine = [i for i, e in enumerate(m.events) if isinstance(e, Turn) and e.seat == self.human]
        if not mine:
            self.console.print("[yellow]nothing of yours to undo[/]")
            return
        while len(m.events) > mine[-1]:
            m.undo()
        self._shown = min(self._shown, len(m.events))

    def _show_position(self) -> None:
        m, say = self.match, self.console.print
        v = m.view(self.human)
        names = self.match.side_names
        say("")
        say("Score: " + "   ".join(f"{n} {s}" for n, s in zip(names, m.scores, strict=False))
            + f"   [dim]hand {m.hand_number + 1}, round {m.round + 1}, dealer {m.names[m.dealer]},"
              f" stock {v.stock_size}[/]")
        say(hand_points_line(m))
        for seat in range(m.rules.players):
            if seat != self.human and v.public[seat]:
                say(f"  {m.names[seat]} declared: {render.cards(v.public[seat])}")
        say(f"Table: {render.cards(v.table)}")
        say(f"Your hand: {render.cards(v.hand)}")

    def _show_events(self) -> None:
        m, say = self.match, self.console.print
        for e in m.events[self._shown:]:
            if isinstance(e, Deal):
                if e.void:
                    say(f"[dim]Void deal (two aces on the table: {render.cards(e.table)}); dealt again.[/]")
                elif e.round == 0:
                    say(f"\n[bold]Hand {e.hand + 1}[/], {m.names[e.dealer]} {self._verb(e.dealer, 'deal')}. "
                        f"Table: {render.cards(e.table)}")
                    if e.dealer_scope:
                        say(f"  The table adds up to {'30' if e.dealer_scope == 2 else '15'}: "
                            f"{m.names[e.dealer]} {self._verb(e.dealer, 'take')} it, {e.dealer_scope} scopa.")
                    if e.capotun:
                        say(f"  Four of a kind on the table: {m.names[e.dealer]}'s side wins the match.")
            elif isinstance(e, Turn):
                say(f"  {m.names[e.seat]}: {render.move(e.move)}" + ("  [bold yellow]SCOPA![/]" if e.scopa else ""))
            elif isinstance(e, HandEnd):
                if e.leftover:
                    who = "nobody" if e.leftover_side is None else self.match.side_names[e.leftover_side]
                    say(f"  Left on the table: {render.cards(e.leftover)} → {who}")
                say(render.hand_end_table(e, self.match.side_names))
                if e.cappotto_side is not None:
                    say(f"[bold]Cappotto! {self.match.side_names[e.cappotto_side]} took all ten diamonds.[/]")
        self._shown = len(m.events)

    def _save(self, why: str) -> None:
        record.save(self.match, self.save_to)
        self.console.print(f"Record saved to {self.save_to}"
                           + (f" — analyse it with: cirulla analyze {self.save_to} --html report.html"
                              if why == "end" else ""), soft_wrap=True)
