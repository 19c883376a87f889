"""The core's answers for a seat's view: its legal moves and the greedy move.

Both depend only on what the seat sees (its own cards, the table, the counts),
so the core is asked on one world consistent with the view
(SeatView.core_world). The rules stay in the core.
"""
from __future__ import annotations

from cirulla.solver.moves import Move
from cirulla.solver.view import SeatView

from .errors import BadRequest


def legal_moves(view: SeatView) -> list[Move]:
    """The legal moves of the seat to move; the view must be that seat's."""
    _check_to_move(view)
    moves = view.core_world().legal_moves()
    if not moves:
        raise BadRequest.one("view.hand", f"seat {view.seat} has no card to play")
    return [Move.from_core(t, view.rules.matta_card) for t in moves]


def greedy_move(view: SeatView) -> Move:
    """The core's greedy policy (best immediate gain) for the seat to move."""
    _check_to_move(view)
    state = view.core_world()
    moves = state.legal_moves()
    if not moves:
        raise BadRequest.one("view.hand", f"seat {view.seat} has no card to play")
    return Move.from_core(moves[state.greedy_choice(moves)], view.rules.matta_card)


def _check_to_move(view: SeatView) -> None:
    if view.to_move != view.seat:
        raise BadRequest.one("view.to_move", f"seat {view.to_move} is to move, not the view's seat {view.seat}: "
                                             "only the seat to move has moves")
