"""Game records for the commands: loading one, and the match as it stood before an event."""
from __future__ import annotations

from pathlib import Path

from cirulla.solver import record
from cirulla.solver.errors import RecordError
from cirulla.solver.events import Turn
from cirulla.solver.match import Match

from .remote import NO_FILE, CliError


def load(path: str) -> Match:
    """The record at `path`, replayed; a record the rules or the schema reject
    is an error naming the file, then the event or field at fault."""
    file_at(path)
    try:
        return record.load(path)
    except RecordError as e:
        error = CliError.of(e)
        raise CliError(f"{path}: {error}", error.code, violations=error.violations) from None


def file_at(path: str | Path) -> Path:
    """`path`, checked to be a file the command can read (exit 5 if not)."""
    p = Path(path)
    if p.is_dir():
        raise CliError(f"{path}: a folder, not a file", NO_FILE)
    if not p.is_file():
        raise CliError(f"{path}: no such file", NO_FILE)
    return p


def position_at(match: Match, event: int) -> Match:
    """The match replayed up to (not including) events[event]."""
    msg = record.to_proto(match)
    del msg.events[event:]
    msg.ClearField("winner")
    return record.from_proto(msg)


def decision_events(match: Match) -> list[tuple[int, int]]:
    """(event index, seat) of every decision of the record."""
    return [(i, e.seat) for i, e in enumerate(match.events) if isinstance(e, Turn)]
