"""One error family for everything a caller can get wrong (all ValueErrors)."""


class CirullaError(ValueError):
    """Base of every error this package raises for bad input."""


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


class RecordError(CirullaError):
    """A game record that cannot be read, or whose events the rules reject."""

    def __init__(self, message: str, *, event: int | None = None):
        self.event = event
        super().__init__(message if event is None else f"event {event}: {message}")
