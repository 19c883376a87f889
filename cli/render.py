"""How cards, moves and scores look in a terminal (rich markup)."""
from __future__ import annotations

from typing import Iterable

from rich.table import Table

from cirulla.solver.cards import Card, sort_key
from cirulla.solver.events import CATEGORIES, HandEnd
from cirulla.solver.moves import Move

_STYLE = ("bold red", "red", "bold", "bold")        # D H C S: red suits red


def card(c: Card) -> str:
    return f"[{_STYLE[c.suit]}]{c.symbol}[/]"


def cards(cs: Iterable[Card]) -> str:
    cs = sorted(cs, key=sort_key)
    return " ".join(card(c) for c in cs) if cs else "[dim]—[/]"


def move(m: Move) -> str:
    if m.is_declaration:
        return f"declare {cards(m.declared)}" + (f" + {cards(m.declared_second)}" if m.declared_second else "") + \
            (f" (matta as {'A234567JQK'[m.matta_as]})" if m.matta_as is not None else "") + f"  [green]+{m.points}[/]"
    if not m.captured:
        return f"{card(m.card)} [dim]on the table[/]"
    return f"{card(m.card)} takes {cards(m.captured)}"


def hand_end_table(end: HandEnd, side_names: list[str]) -> Table:
    t = Table(title=f"Hand {end.hand + 1}", show_lines=False)
    t.add_column("")
    for name in side_names:
        t.add_column(name, justify="right")
    for cat in CATEGORIES:
        values = [getattr(s, cat) for s in end.sides]
        if any(values):
            t.add_row(cat.replace("_", " "), *map(str, values))
    t.add_row("[bold]hand[/]", *(f"[bold]{s.total}[/]" for s in end.sides))
    t.add_row("[bold]match[/]", *(f"[bold]{s.match_total}[/]" for s in end.sides))
    return t
