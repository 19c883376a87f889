"""Game records for the commands: loading one, and the match as it stood before an event."""
from __future__ import annotations

from pathlib import Path

from cirulla.solver import record
from cirulla.solver.events import Turn
from cirulla.solver.match import Match

from .remote import NO_FILE, CliError


def load(path: str) -> Match:
    """The record at `path`, replayed (RecordError names a bad event)."""
    if not Path(path).is_file():
        raise CliError(f"{path}: no such file", NO_FILE)
    return record.load(path)


def position_at(match: Match, event: int) -> Match:
    """The match replayed up to (not including) events[event]."""
    msg = record.to_proto(match)
    del msg.events[event:]
    msg.ClearField("winner")
    return record.from_proto(msg)


def decision_events(match: Match) -> list[tuple[int, int]]:
    """(event index, seat) of every decision of the record."""
    return [(i, e.seat) for i, e in enumerate(match.events) if isinstance(e, Turn)]
