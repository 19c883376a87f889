"""The rules of a match: option switches (docs/rules.md section 9) and presets (10)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import Any

from cirulla.v1 import game_pb2

from . import _core
from .bounds import field_range
from .cards import Card
from .errors import RulesError


class Capture(StrEnum):
    """Whether a card that can capture must (R-MUST)."""
    MANDATORY = "mandatory"
    OPTIONAL = "optional"


class AceOnAce(StrEnum):
    """What an ace played onto a table with an ace takes (R-ACE-ACE)."""
    ONLY_ACE = "only_ace"
    ACE_OR_FIFTEEN = "ace_or_fifteen"
    SWEEP = "sweep"


class Declarations(StrEnum):
    """Whether a holding that scores must be declared (R-DECL-CHOICE)."""
    OPTIONAL = "optional"
    MANDATORY = "mandatory"


class Matta(StrEnum):
    """The wild card (R-MATTA), by its text form."""
    SEVEN_OF_HEARTS = "7H"
    QUEEN_OF_HEARTS = "QH"
    NONE = "none"


# the options whose values are an enum, and the enum
CHOICES: dict[str, type[StrEnum]] = {"capture": Capture, "ace_on_ace": AceOnAce,
                                     "declarations": Declarations, "matta": Matta}

# the rule each option changes (section 9), cited when an option's value is refused
OPTION_RULES = {
    "players": "R-SEATS", "target": "R-TARGET", "hands": "R-HANDS-LIMIT", "capture": "R-MUST",
    "ace_on_ace": "R-ACE-ACE", "single_match_first": "R-CHOICE", "declarations": "R-DECL-CHOICE",
    "matta": "R-MATTA", "piccola_to_seven": "R-SC-PICCOLA", "grande_long": "R-SC-GRANDE",
    "buona_stack": "R-V13", "grande_in_hand": "R-V30", "capotun": "R-CAPOTUN",
    "re_bello": "R-SC-*", "cirullone": "R-VC", "five_players": "R-V5",
}

PRESETS: dict[str, dict[str, Any]] = {
    "classic": {},
    "online": {"single_match_first": True, "declarations": Declarations.MANDATORY},
    "relaxed": {"capture": Capture.OPTIONAL, "ace_on_ace": AceOnAce.ACE_OR_FIFTEEN},
    "extended": {"ace_on_ace": AceOnAce.ACE_OR_FIFTEEN, "piccola_to_seven": True},
    "cirullone": {"cirullone": True, "target": 101},
    "five": {"five_players": True, "players": 5},
}


# at most what a record holds (the schema's ranges): a match must be one a record can keep
MAX_TARGET = field_range(game_pb2.Rules, "target")[1]
MAX_HANDS = field_range(game_pb2.Rules, "hands")[1]

@dataclass(frozen=True)
class Rules:
    """Every rule switch; `Rules.preset("online", players=4)` builds from a preset.

    :raises RulesError: for an unknown value or options that cannot go together.
    """

    players: int = 2
    target: int = 51
    hands: int | None = None
    capture: Capture = Capture.MANDATORY
    ace_on_ace: AceOnAce = AceOnAce.ONLY_ACE
    single_match_first: bool = False
    declarations: Declarations = Declarations.OPTIONAL
    matta: Matta = Matta.SEVEN_OF_HEARTS
    piccola_to_seven: bool = False
    grande_long: bool = False
    buona_stack: bool = False
    grande_in_hand: bool = False
    capotun: bool = False
    re_bello: bool = False
    cirullone: bool = False
    five_players: bool = False
    name: str = field(default="classic", compare=False)

    @classmethod
    def preset(cls, name: str = "classic", **options: Any) -> Rules:
        """The preset with these options on top; an option's value as the
        caller gives it (checked here: a text becomes its enum)."""
        if name not in PRESETS:
            raise RulesError(f"unknown preset {name!r}; presets are {', '.join(PRESETS)}", field="preset")
        unknown = set(options) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise RulesError(f"unknown option(s) {', '.join(sorted(unknown))}; "
                             f"the options are {', '.join(OPTION_RULES)}")
        return cls(**{**PRESETS[name], **options, "name": name})

    def __post_init__(self) -> None:
        def check(ok: bool, option: str, message: str) -> None:
            if not ok:
                raise RulesError(message, field=option)

        for opt, kind in CHOICES.items():
            value = getattr(self, opt)
            try:
                object.__setattr__(self, opt, kind(value))  # a string given: its enum
            except (ValueError, TypeError):
                check(False, opt, f"option {opt} must be one of {', '.join(kind)} ({OPTION_RULES[opt]}), "
                                  f"got {value!r}")
        for f in dataclasses.fields(self):
            if f.type == "bool":
                check(isinstance(getattr(self, f.name), bool), f.name,
                      f"option {f.name} must be true or false ({OPTION_RULES[f.name]}), got {getattr(self, f.name)!r}")
        check(isinstance(self.players, int) and self.players in (2, 3, 4, 5), "players",
              f"players must be 2, 3, 4 or 5 (5 with five_players; R-SEATS), got {self.players!r}")
        check(self.five_players or self.players != 5, "five_players",
              "5 players play the five_players variant (R-V5): set five_players (the preset five)")
        check(not self.five_players or self.players == 5, "players",
              f"the five_players variant (R-V5) is for 5 players, got {self.players!r}")
        check(not (self.cirullone and self.five_players), "cirullone",
              "cirullone (R-VC) and five_players (R-V5) do not combine: each deals the rounds its own way")
        check(isinstance(self.target, int) and 0 < self.target <= MAX_TARGET, "target",
              f"target, the points that end the match, must be a positive integer up to {MAX_TARGET} (R-TARGET), "
              f"got {self.target!r}")
        check(self.hands is None or (isinstance(self.hands, int) and 0 < self.hands <= MAX_HANDS), "hands",
              f"hands, a fixed number of hands to play, must be a positive integer up to {MAX_HANDS} or none "
              f"(R-HANDS-LIMIT), got {self.hands!r}")

    @property
    def n_sides(self) -> int:
        return 2 if self.players == 4 else self.players     # R-SIDES

    def side_of(self, seat: int) -> int:
        return seat % self.n_sides

    @property
    def table_cards(self) -> int:
        return 5 if self.five_players else 4                # R-DEAL, R-V5

    def round_cards(self, rnd: int) -> int:
        """Cards each player gets in round rnd (0-based) of a hand."""
        return self.core.round_cards(rnd)

    @cached_property                    # read at every move of a replay
    def matta_card(self) -> Card | None:
        return None if self.matta is Matta.NONE else Card.parse(self.matta)

    def replace(self, **options: Any) -> Rules:
        return dataclasses.replace(self, **options)

    def __getstate__(self) -> dict[str, Any]:
        # the switches alone: `core` (once cached) holds a C struct, which does not pickle; it is
        # built again where the rules are unpickled (a worker process of the arena, of the batch)
        return {k: v for k, v in self.__dict__.items() if k != "core"}

    @cached_property
    def core(self) -> _core.CoreRules:
        m = self.matta_card
        return _core.CoreRules(
            n_players=self.players,
            capture_optional=self.capture is Capture.OPTIONAL,
            ace_on_ace=list(AceOnAce).index(self.ace_on_ace),
            single_match_first=self.single_match_first,
            decl_mandatory=self.declarations is Declarations.MANDATORY,
            matta=-1 if m is None else m.index,
            piccola_to_seven=self.piccola_to_seven,
            grande_long=self.grande_long,
            buona_stack=self.buona_stack,
            grande_in_hand=self.grande_in_hand,
            capotun=self.capotun,
            re_bello=self.re_bello,
            cirullone=self.cirullone,
            five_players=self.five_players,
        )

    def options(self) -> dict[str, object]:
        """The switches as a plain dict (the preset name aside)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "name"}

