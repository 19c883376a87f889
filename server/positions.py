"""The core's answers for a seat's view: its legal moves and the greedy move.

Both depend only on what the seat sees (its own cards, the table, the counts),
so the core is asked on one world consistent with the view: the hidden cards
are placed in a fixed arbitrary way that changes none of those answers. The
rules stay in the core; this only lays the view out as the core's State.
"""
from __future__ import annotations

from cirulla.solver import _core
from cirulla.solver.cards import mask_of
from cirulla.solver.moves import Move
from cirulla.solver.view import SeatView

from .errors import BadRequest


def world(view: SeatView) -> _core.CoreState:
    """A core state the view could be a view of (the view must be validated)."""
    r = view.rules
    n = r.players
    hidden = [c.index for c in view.unseen()]       # other seats' hidden cards, then the stock
    hands, k = [], 0
    for s in range(n):
        if s == view.seat:
            hands.append(mask_of(view.hand))
        else:
            take = view.hidden_count(s)
            hands.append(mask_of(view.public[s]) | _mask(hidden[k:k + take]))
            k += take
    stock_pos = 40 - view.stock_size
    dealt = [i for i in range(40) if i not in set(hidden[k:])]
    cval = [c % 10 + 1 for c in range(40)]
    if view.matta_as is not None:
        cval[r.matta_card.index] = view.matta_as + 1                    # R-MATTA
    low = [0] * 5
    if r.five_players and view.round == 2:                              # R-V5
        for s, played in enumerate(view.played_this_round):
            if played:
                low[s] = cval[played[-1].index]
    fields = {
        "hand": _pad(hands), "public": _pad([mask_of(p) for p in view.public]),
        "pile": _pad([mask_of(p) for p in view.piles]), "table": mask_of(view.table),
        "stock": dealt + hidden[k:], "stock_pos": stock_pos, "cval": cval,
        "scope": _pad(list(view.scope)), "decl": _pad(list(view.declarations)), "low_card": low,
        "dealer": view.dealer, "turn": view.to_move, "last_capturer": view.last_capturer,
        "round": view.round, "round_cards": r.round_cards(view.round),
        "declared": sum(1 << s for s, d in enumerate(view.declared) if d),
        "phase": _core.PHASE_PLAY, "dealer_buona": 0, "instant_winner": -1,
    }
    return _core.CoreState.restore(r.core, fields)


def legal_moves(view: SeatView) -> list[Move]:
    """The legal moves of the seat to move; the view must be that seat's."""
    _check_to_move(view)
    moves = world(view).legal_moves()
    if not moves:
        raise BadRequest.one("view.hand", f"seat {view.seat} has no card to play")
    return [Move.from_core(t, view.rules.matta_card) for t in moves]


def greedy_move(view: SeatView) -> Move:
    """The core's greedy policy (best immediate gain) for the seat to move."""
    _check_to_move(view)
    state = world(view)
    moves = state.legal_moves()
    if not moves:
        raise BadRequest.one("view.hand", f"seat {view.seat} has no card to play")
    return Move.from_core(moves[state.greedy_choice(moves)], view.rules.matta_card)


def _check_to_move(view: SeatView) -> None:
    if view.to_move != view.seat:
        raise BadRequest.one("view.to_move", f"seat {view.to_move} is to move, not the view's seat {view.seat}: "
                                             "only the seat to move has moves")


def _mask(indices) -> int:
    m = 0
    for i in indices:
        m |= 1 << i
    return m


def _pad(values: list[int]) -> list[int]:
    return values + [0] * (5 - len(values))
