"""One error family for everything a caller can get wrong (all ValueErrors).

Every error carries its structure, not only its text: the field at fault
(a path such as ``hand[2]`` or ``events[7]``, relative to what the caller
gave) and the reason (a sentence a person can read alone: ``str(error)``),
so that a wire layer can name the field without parsing the message. An error about several fields at once (a view with
three problems) carries them all in ``violations``.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple, TypeAlias


class Violation(NamedTuple):
    """One problem with one field of the caller's input."""
    field: str                      # a path relative to the input, "" for the whole of it
    reason: str


# what __reduce__ gives pickle: the class, its arguments, its attributes
_Reduced: TypeAlias = tuple[type["CirullaError"], tuple[object, ...], dict[str, object]]


class CirullaError(ValueError):
    """Base of every error this package raises for bad input."""

    def __init__(self, reason: str, *, field: str = ""):
        super().__init__(reason)
        self.reason = reason
        self.field = field

    @property
    def violations(self) -> tuple[Violation, ...]:
        return (Violation(self.field, self.reason),)

    def __str__(self) -> str:
        return self.reason

    def __reduce__(self) -> _Reduced:     # pickles (process pools) with its structure
        return type(self), (self.reason,), self.__dict__


class InvalidCardError(CirullaError):
    """A card's text does not name one of the 40 cards (R-CODE)."""


class InvalidMoveError(CirullaError):
    """A move's text cannot be parsed."""


class IllegalMoveError(CirullaError):
    """A well-formed move that the rules do not allow here."""


class RulesError(CirullaError):
    """An unknown preset or option, or options that do not fit together."""


class StateError(CirullaError):
    """An action that does not fit the match's current phase or a view that cannot be."""


class ViewError(StateError):
    """A seat's view that no real table can show, with every problem found in it."""

    def __init__(self, violations: Iterable[Violation | tuple[str, str]]):
        self._violations = tuple(Violation(*v) for v in violations)
        if not self._violations:
            raise ValueError("a ViewError names at least one problem")
        first = self._violations[0]
        super().__init__(first.reason, field=first.field)

    @property
    def violations(self) -> tuple[Violation, ...]:
        return self._violations

    def __str__(self) -> str:
        return "; ".join(f"{f}: {r}" if f else r for f, r in self._violations)

    def __reduce__(self) -> _Reduced:
        return type(self), (self._violations,), self.__dict__


class RecordError(CirullaError):
    """A game record that cannot be read, or whose events the rules reject.

    ``event`` is the index of the event at fault (None for the header, the
    winner or the file itself); ``field`` its path in the record
    (``events[7]``, ``winner``, ``rules.capture``).
    """

    def __init__(self, reason: str, *, event: int | None = None, field: str = ""):
        super().__init__(reason, field=field or (f"events[{event}]" if event is not None else ""))
        self.event = event

    def __str__(self) -> str:
        if self.event is not None:
            return f"event {self.event}: {self.reason}"
        return f"{self.field}: {self.reason}" if self.field else self.reason
