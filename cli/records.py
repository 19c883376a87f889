"""Positions inside a game record: the match as it stood before an event."""
from __future__ import annotations

from cirulla.solver import record
from cirulla.solver.events import Turn
from cirulla.solver.match import Match


def position_at(match: Match, event: int) -> Match:
    """The match replayed up to (not including) events[event]."""
    msg = record.to_proto(match)
    del msg.events[event:]
    msg.winner = -1
    return record.from_proto(msg)


def decision_events(match: Match) -> list[tuple[int, int]]:
    """(event index, seat) of every decision of the record."""
    return [(i, e.seat) for i, e in enumerate(match.events) if isinstance(e, Turn)]
