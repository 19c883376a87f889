"""Game records: every event of a match, saved as JSON in the cirulla.v1.Record
schema (proto/cirulla/v1/game.proto, protobuf's JSON mapping), and loaded by
replaying every event through the rules.

The record is the file format, so this module owns the conversion of what a
record holds (rules, moves, events) between the domain and its messages; the
server's wire layer (cirulla.server.convert) builds on it.
"""
from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from google.protobuf import descriptor, json_format

from cirulla.v1 import game_pb2 as pb

from .bounds import out_of_bounds
from .cards import RANKS, Card, ordered
from .errors import CirullaError, RecordError, RulesError
from .events import CATEGORIES, Deal, Event, HandEnd, Turn
from .match import Match, Phase
from .moves import Move
from .rules import CHOICES, Matta, Rules

SCHEMA_VERSION = 2
# Schema 1 (records written before 2026-11-30) had no field presence: a side
# that was "none" was -1 and a side 0 was left out like every default; the
# matta was text ("7H"). Such records still load.
SCHEMAS = (1, 2)
_SCHEMA1_NONE = -1
_SCHEMA1_MATTA = {m.value.lower(): m.name for m in Matta}
_BOOL_OPTIONS = ("single_match_first", "piccola_to_seven", "grande_long", "buona_stack",
                 "grande_in_hand", "capotun", "re_bello", "cirullone", "five_players")

if TYPE_CHECKING:
    from google._upb import _message as upb

EnumType: TypeAlias = "descriptor.EnumDescriptor | upb.EnumDescriptor"    # as bounds.FieldType


# --- rules ---

def _enum_field(name: str) -> tuple[EnumType, str]:
    """The Rules message's enum field of an option, and its values' prefix."""
    enum = pb.Rules.DESCRIPTOR.fields_by_name[name].enum_type
    if enum is None:
        raise TypeError(f"cirulla.v1.Rules.{name} is not an enum field")
    return enum, enum.values[0].name.removesuffix("UNSPECIFIED")


def rules_to_proto(rules: Rules) -> pb.Rules:
    msg = pb.Rules(preset=rules.name, players=rules.players, target=rules.target, hands=rules.hands or 0)
    for name in CHOICES:                    # Capture.MANDATORY -> CAPTURE_RULE_MANDATORY
        enum, prefix = _enum_field(name)
        setattr(msg, name, enum.values_by_name[prefix + getattr(rules, name).name].number)
    for opt in _BOOL_OPTIONS:
        setattr(msg, opt, getattr(rules, opt))
    return msg


def rules_from_proto(msg: pb.Rules) -> Rules:
    """A Rules from its message; unset fields keep the preset's values."""
    options: dict[str, object] = {}
    if msg.players:
        options["players"] = msg.players
    if msg.target:
        options["target"] = msg.target
    if msg.hands:
        options["hands"] = msg.hands
    for name, kind in CHOICES.items():
        number = getattr(msg, name)
        if number:
            enum, prefix = _enum_field(name)
            value = enum.values_by_number.get(number)
            if value is None:
                raise RulesError(f"unknown value {number}: the values are 1..{len(enum.values) - 1} "
                                 f"({', '.join(v.name for v in enum.values[1:])})", field=name)
            options[name] = kind[value.name.removeprefix(prefix)]
    for opt in _BOOL_OPTIONS:
        if msg.HasField(opt):
            options[opt] = getattr(msg, opt)
    return Rules.preset(msg.preset or "classic", **options)


# --- moves and events ---

def move_to_proto(move: Move) -> pb.Move:
    msg = pb.Move()
    msg.CopyFrom(_move_message(move, move.points))      # a copy: the caller may change it
    return msg


@functools.lru_cache(maxsize=4096)      # a record's moves, written again in every answer about it
def _move_message(move: Move, points: int) -> pb.Move:
    """`points` beside the move: equal moves may differ in it (a declaration's, not compared)."""
    return pb.Move(card=str(move.card) if move.card else "",
                   captured=[str(c) for c in ordered(move.captured)],
                   declared=[str(c) for c in ordered(move.declared)],
                   declared_second=[str(c) for c in ordered(move.declared_second)],
                   matta_as="" if move.matta_as is None else RANKS[move.matta_as],
                   points=points, text=str(move))


def move_from_proto(msg: pb.Move, matta: Card | None) -> Move:
    """The move a message describes: its fields (card and captured, or declared) if
    it has them, else its text."""
    if msg.card:
        text = msg.card + (" x " + " ".join(msg.captured) if msg.captured else "")
    elif msg.declared:
        named = msg.matta_as.upper() if msg.matta_as else ""

        def group(cards: Iterable[str]) -> str:
            return " ".join(c + (f"={named}" if named and matta and Card.parse(c) == matta else "")
                            for c in cards)
        text = "declare " + group(msg.declared) + (" + " + group(msg.declared_second) if msg.declared_second else "")
    else:
        text = msg.text
    return Move.parse(text, matta=matta)


def event_to_proto(e: Event) -> pb.Event:
    if isinstance(e, Deal):
        return pb.Event(deal=pb.Deal(hand=e.hand, round=e.round, dealer=e.dealer,
                                     table=[str(c) for c in e.table],
                                     hands=[pb.Holding(cards=[str(c) for c in h]) for h in e.hands],
                                     void=e.void, dealer_scope=e.dealer_scope, capotun=e.capotun))
    if isinstance(e, Turn):
        return pb.Event(turn=pb.Turn(seat=e.seat, move=move_to_proto(e.move), scopa=e.scopa))
    return pb.Event(hand_end=pb.HandEnd(
        hand=e.hand, leftover=[str(c) for c in e.leftover], leftover_side=e.leftover_side,
        cappotto_side=e.cappotto_side,
        sides=[pb.SideScore(side=s.side, total=s.total, match_total=s.match_total,
                            **{c: getattr(s, c) for c in CATEGORIES}) for s in e.sides]))


def _optional(msg: pb.Record | pb.HandEnd, name: str, schema: int) -> int | None:
    """An optional side (winner, leftover_side, cappotto_side): None if unset,
    or in schema 1, if -1."""
    side: int = getattr(msg, name)
    if schema == 1:
        return None if side == _SCHEMA1_NONE else side
    return side if msg.HasField(name) else None


# --- records ---

def to_proto(match: Match) -> pb.Record:
    return pb.Record(schema_version=SCHEMA_VERSION, rules=rules_to_proto(match.rules),
                     first_dealer=match.first_dealer, player_names=list(match.names),
                     events=[event_to_proto(e) for e in match.events], winner=match.winner)


def dumps(match: Match) -> str:
    return json_format.MessageToJson(to_proto(match), indent=1)


def save(match: Match, path: str | Path) -> None:
    Path(path).write_text(dumps(match) + "\n", encoding="utf-8")


def loads(text: str) -> Match:
    """Read a record and replay it; raises RecordError naming the bad event."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, TypeError) as e:
        raise RecordError(f"not JSON: {e}") from None
    except RecursionError:                  # arrays or objects nested thousands deep
        raise RecordError("not a cirulla.v1.Record: JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise RecordError("not a cirulla.v1.Record: a record is a JSON object")
    msg = pb.Record()
    try:
        json_format.ParseDict(_upgrade(data), msg)
    except json_format.ParseError as e:
        raise RecordError(f"not a cirulla.v1.Record: {e}") from None
    outside = out_of_bounds(msg)
    if outside:                             # before the replay acts on any number
        field, reason = outside[0]
        event, _, within = field.removeprefix("events[").partition("].")
        if event.isdigit():
            raise RecordError(f"{within}: {reason}", event=int(event), field=field)
        raise RecordError(reason, field=field)
    return from_proto(msg)


def _upgrade(data: dict[str, object]) -> dict[str, object]:
    """A schema-1 record's JSON as today's: the matta as text ("7H") becomes its
    enum's name (the sides are read by _optional)."""
    rules = data.get("rules")
    if isinstance(rules, dict) and isinstance(rules.get("matta"), str):
        name = _SCHEMA1_MATTA.get(rules["matta"].lower())
        if name is not None:
            rules["matta"] = "MATTA_" + name
    return data


def load(path: str | Path) -> Match:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise RecordError(f"cannot read {path}: {e.strerror}") from None
    except UnicodeDecodeError as e:                     # a record is JSON, and JSON is UTF-8
        raise RecordError(f"not JSON: not UTF-8 text ({e.reason} at byte {e.start})") from None
    return loads(text)


def from_proto(msg: pb.Record) -> Match:
    """Replay a record through the rules, checking every event against them.

    The record's events are walked in lockstep with the events the match
    produces: a turn that plays a hand's last card is followed by that hand's
    hand_end, and a hand_end comes nowhere else. A record may stop after any
    event (an unfinished one names no winner), but a finished match's record
    ends with its last hand_end.

    :raises RecordError: with the field at fault (``events[7].turn.move``,
        ``rules.capture``, ``winner``) and the event's index.
    """
    if msg.schema_version not in SCHEMAS:
        raise RecordError(f"schema_version {msg.schema_version} is not one of {', '.join(map(str, SCHEMAS))}",
                          field="schema_version")
    try:
        rules = rules_from_proto(msg.rules)
    except CirullaError as e:
        raise RecordError(e.reason, field="rules" + (f".{e.field}" if e.field else "")) from None
    try:
        match = Match(rules, dealer=msg.first_dealer, manual_deal=True, names=list(msg.player_names) or None)
    except CirullaError as e:
        field = "first_dealer" if "dealer" in e.reason else "player_names"
        raise RecordError(e.reason, field=field) from None
    owed: tuple[int, HandEnd] | None = None     # (its turn's index, the hand_end) the record must give next
    for i, ev in enumerate(msg.events):
        kind = ev.WhichOneof("kind")
        _in_step(owed, i, ev)
        try:
            _replay(match, ev, msg.schema_version, owed[1] if owed else None)
        except CirullaError as e:
            where = ".".join(p for p in (kind, e.field) if p)
            raise RecordError(e.reason, event=i, field=f"events[{i}]" + (f".{where}" if where else "")) from None
        owed = _owed(match, i, kind)
    if owed is not None and match.is_over:
        raise RecordError(f"the record stops after events[{owed[0]}], the last turn of hand {owed[1].hand}, "
                          "without its hand_end, though that hand ends the match: a finished match's record "
                          "ends with the hand_end of its last hand (R-TARGET, R-WINNER)",
                          event=len(msg.events))
    winner = _optional(msg, "winner", msg.schema_version)
    if winner != match.winner:
        unfinished = " (the record is unfinished: it names no winner until the match is over)" \
            if match.winner is None else ""
        raise RecordError(f"the record names winner {winner}, the replay gives "
                          f"{'none yet' if match.winner is None else match.winner}{unfinished}", field="winner")
    return match


def _in_step(owed: tuple[int, HandEnd] | None, i: int, ev: pb.Event) -> None:
    """Event `i` must be the next event the rules produce: the hand_end owed
    by the turn that ended a hand, and a hand_end only then.

    A record is the match's events, one for one (Match.play writes a hand's
    last turn and its hand_end together); an unfinished record may stop
    after any event, between that turn and its hand_end too (the CLI's
    ``hint --event`` cuts a record anywhere).
    """
    kind = ev.WhichOneof("kind")
    if owed is not None and kind != "hand_end":
        j, end = owed
        what = f"a {kind}" if kind else "an empty event"
        raise RecordError(f"{what} where the hand_end of hand {end.hand} must be: the turn at events[{j}] "
                          "played the last card of the hand, so the rules end the hand there (R-LEFTOVER, "
                          "section 6) and its hand_end is the next event", event=i)
    if owed is None and kind == "hand_end":
        raise RecordError(f"hand {ev.hand_end.hand} has not ended here: a hand_end comes once, right after "
                          "the turn that plays the hand's last card, and no such turn precedes this one "
                          "(a repeated hand_end, or one moved away from its hand's last turn)", event=i)


def _owed(match: Match, i: int, kind: str | None) -> tuple[int, HandEnd] | None:
    """After event `i` of the record: the hand_end the record owes next (with
    `i`), if that event was the turn that ended a hand."""
    last = match.events[-1] if match.events else None
    return (i, last) if kind == "turn" and isinstance(last, HandEnd) else None


def _replay(match: Match, ev: pb.Event, schema: int, owed: HandEnd | None) -> None:
    """Apply one event of the record to the match, checking it against the
    rules; `owed` is the hand_end the rules produced with the turn before."""
    kind = ev.WhichOneof("kind")
    if kind == "deal":
        d = ev.deal
        if match.phase is not Phase.DEAL:
            raise RecordError(f"a deal, but the match is in phase '{match.phase}'")
        expect = (match.hand_number, match.round, match.dealer)
        if (d.hand, d.round, d.dealer) != expect:
            raise RecordError(f"deal of hand {d.hand} round {d.round} by {d.dealer}; "
                              f"expected hand {expect[0]} round {expect[1]} by {expect[2]}")
        try:
            dealt = match.deal([list(h.cards) for h in d.hands], list(d.table))
        except CirullaError as e:
            raise RecordError(e.reason, field="hands") from None
        _same(d.void, "void", dealt.void)
        _same(d.dealer_scope, "dealer_scope", dealt.dealer_scope)
        _same(d.capotun, "capotun", dealt.capotun)
    elif kind == "turn":
        t = ev.turn
        if match.phase is not Phase.PLAY:
            raise RecordError(f"a turn, but the match is in phase '{match.phase}'")
        if t.seat != match.to_move:
            raise RecordError(f"seat {t.seat} plays, but it is seat {match.to_move}'s turn (R-DEALER, R-SEATS)",
                              field="seat")
        try:
            turn = match.play(move_from_proto(t.move, match.rules.matta_card))
        except CirullaError as e:
            raise RecordError(e.reason, field="move") from None
        if t.move.points and t.move.points != turn.move.points:
            raise RecordError(f"{turn.move} scores {turn.move.points}, not {t.move.points}", field="move.points")
        _same(t.scopa, "scopa", turn.scopa)
    elif kind == "hand_end":
        if owed is None:                    # from_proto's _in_step refuses it first
            raise RecordError("a hand_end that no hand produced here")
        if ev.hand_end.hand != owed.hand:
            raise RecordError(f"hand {ev.hand_end.hand} has not ended here: the turn before it ended "
                              f"hand {owed.hand}", field="hand")
        _check_hand_end(owed, ev.hand_end, schema)
    else:
        raise RecordError("an empty event")


def _same(recorded: object, name: str, replayed: object) -> None:
    if recorded != replayed:
        raise RecordError(f"{name} is {recorded!r} in the record, {replayed!r} by the rules", field=name)


def _check_hand_end(end: HandEnd, msg: pb.HandEnd, schema: int) -> None:
    _same(sorted(msg.leftover), "leftover", sorted(str(c) for c in end.leftover))
    _same(_optional(msg, "leftover_side", schema), "leftover_side", end.leftover_side)
    _same(_optional(msg, "cappotto_side", schema), "cappotto_side", end.cappotto_side)
    if len(msg.sides) != len(end.sides):
        raise RecordError(f"{len(msg.sides)} side scores for {len(end.sides)} sides", field="sides")
    for k, (got, s) in enumerate(zip(end.sides, msg.sides, strict=False)):
        for c in (*CATEGORIES, "total", "match_total"):
            if getattr(s, c) != getattr(got, c):
                raise RecordError(f"side {got.side} {c}: {getattr(s, c)} in the record, "
                                  f"{getattr(got, c)} by the rules", field=f"sides[{k}].{c}")

