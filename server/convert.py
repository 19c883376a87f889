"""The wire layer: every conversion between cirulla.v1 messages and domain
objects, for the servicers, the JSON-lines engine and the command line alike.

Domain values carry their message's field names, so a message is built from
a value by copying the same-named fields (``to_message``) and read back the
same way (``from_message``); a converter only spells out what differs. What a
game record holds (rules, moves, events) is converted by
``cirulla.solver.record``, the file format's owner.

Reading checks as it goes: a domain error (CirullaError) carries the field at
fault, and ``bad_request`` turns it into field violations under the
request's path (``view.hand[2]``) without parsing any text; ``Problems``
gathers every violation of one request into one BadRequest.
"""
from __future__ import annotations

import dataclasses
import functools
import re
import typing
from collections.abc import Callable, Iterable, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from google.protobuf import message_factory
from google.protobuf.message import Message

from cirulla.solver import record
from cirulla.solver.analysis import (
    DealLuck,
    Decision,
    Judgement,
    PlayerSummary,
    Position,
    SideSummary,
    Summary,
    TimelinePoint,
    explain,
)
from cirulla.solver.bounds import FieldType, is_repeated, out_of_bounds
from cirulla.solver.cards import RANKS, Card
from cirulla.solver.errors import CirullaError, ViewError
from cirulla.solver.events import CATEGORIES, Deal, Event, HandEnd, SideScore, Turn
from cirulla.solver.i18n import LANGUAGES, Translations, translator
from cirulla.solver.match import Match
from cirulla.solver.moves import Move
from cirulla.solver.players import RATINGS, Level
from cirulla.solver.puzzles import Puzzle, PuzzleMove, PuzzleSource
from cirulla.solver.reasons import hint_reasons
from cirulla.solver.record import EnumType
from cirulla.solver.rules import CHOICES, PRESETS, Rules
from cirulla.solver.search import DEFAULT_BUDGET, SearchResult
from cirulla.solver.view import SeatView
from cirulla.solver.view_builder import Row, build_view
from cirulla.v1 import analysis_service_pb2 as apb
from cirulla.v1 import engine_service_pb2 as epb
from cirulla.v1 import game_pb2 as pb
from cirulla.v1 import puzzle_pb2 as zpb
from cirulla.v1 import rules_service_pb2 as rpb

from .config import ServerConfig
from .errors import BadRequest

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T")
P = ParamSpec("P")
M = TypeVar("M", bound=Message)
D = TypeVar("D", bound="DataclassInstance")


# --- problems: every violation of a request, at once --------------------------------

def path(prefix: str, field: str) -> str:
    """A field path under a request's path: ("view", "hand[2]") -> "view.hand[2]"."""
    if not field:
        return prefix
    if not prefix:
        return field
    return prefix + field if field.startswith("[") else f"{prefix}.{field}"


def bad_request(error: CirullaError, prefix: str) -> BadRequest:
    """A domain error as INVALID_ARGUMENT, each of its fields under `prefix`."""
    return BadRequest([(path(prefix, v.field), v.reason) for v in error.violations])


class Problems:
    """The violations of one request, gathered from every part of it; one per
    field, the first found.

    >>> problems = Problems()
    >>> problems.add("view.seat", "7 is out of range 0..4")
    >>> problems.add("view.seat", "7 is not a seat 0..1 (R-SEATS)")
    >>> problems.check(check_record, pb.Record(schema_version=3), "record")
    >>> problems.raise_any()
    Traceback (most recent call last):
    ...
    cirulla.server.errors.BadRequest: view.seat: 7 is out of range 0..4 (and 1 more)
    """

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def add(self, field: str, reason: str) -> None:
        self.items.append((field, reason))

    def check(self, read: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T | None:
        """`read(*args)`, or None with its violations noted if it refuses."""
        try:
            return read(*args, **kwargs)
        except BadRequest as e:
            self.items += e.violations
            return None

    def one_per_field(self) -> list[tuple[str, str]]:
        first: dict[str, str] = {}
        for field, reason in self.items:
            first.setdefault(field, reason)
        return list(first.items())

    def raise_any(self) -> None:
        if self.items:
            raise BadRequest(self.one_per_field())


# --- the generic copy --------------------------------------------------------------

def _enum_prefix(enum: EnumType) -> str:
    """RankedBy -> "RANKED_BY_": the proto style guide's value prefix."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", enum.name).upper() + "_"


def _enum_type(field: FieldType) -> EnumType:
    if field.enum_type is None:
        raise TypeError(f"{field.full_name} is not an enum field")
    return field.enum_type


def enum_number(field: FieldType, value: Enum | str) -> int:
    """A domain enum member (RankedBy.WIN_CHANCE) or name ("win_chance") as the
    field's enum number (RANKED_BY_WIN_CHANCE): the member names are the
    proto's value names without their prefix."""
    enum = _enum_type(field)
    name = value.name if isinstance(value, Enum) else value.upper()
    return enum.values_by_name[_enum_prefix(enum) + name].number


def enum_name(field: FieldType, number: int) -> str | None:
    """The field's enum number as its name without the prefix ("WIN_CHANCE");
    None for 0 (unspecified)."""
    if number == 0:
        return None
    enum = _enum_type(field)
    value = enum.values_by_number.get(number)
    if value is None:
        raise ValueError(f"unknown value {number} of {enum.full_name}")
    return value.name.removeprefix(_enum_prefix(enum))


@functools.cache
def _field_types(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _enum_of(cls: type, name: str) -> type[Enum] | None:
    """The Enum a dataclass field holds (through `X | None`), if any."""
    hint = _field_types(cls).get(name)
    for kind in (hint, *typing.get_args(hint)):
        if isinstance(kind, type) and issubclass(kind, Enum):
            return kind
    return None


def _wire(field: FieldType, value: Any) -> Any:
    """One domain value as the field's wire value."""
    m = field.message_type
    if isinstance(value, Message):                          # converted already
        return value
    if m is None:
        if field.enum_type is not None and isinstance(value, str):
            return enum_number(field, value)
        return str(value) if isinstance(value, Card) else value
    if m is pb.Move.DESCRIPTOR:
        return record.move_to_proto(value)
    if m is pb.Holding.DESCRIPTOR:
        return pb.Holding(cards=[str(c) for c in value])
    if m is pb.Rules.DESCRIPTOR:
        return record.rules_to_proto(value)
    if m is pb.Event.DESCRIPTOR:
        return record.event_to_proto(value)
    # types-protobuf takes the pure-Python backend's Descriptor only; protobuf takes either backend's
    cls = message_factory.GetMessageClass(m)                # type: ignore[arg-type]
    return cls(**value) if isinstance(value, dict) else to_message(value, cls)


def to_message(value: object, cls: type[M], **fields: Any) -> M:
    """A `cls` message from the same-named attributes of a domain value; `fields`
    gives those that need more than a copy. None leaves a field unset."""
    msg = cls()
    for f in cls.DESCRIPTOR.fields:
        v = fields[f.name] if f.name in fields else getattr(value, f.name, None)
        if v is None:
            continue
        if is_repeated(f):
            getattr(msg, f.name).extend(_wire(f, x) for x in v)
        elif f.message_type is not None:
            getattr(msg, f.name).CopyFrom(_wire(f, v))
        else:
            setattr(msg, f.name, _wire(f, v))
    return msg


def from_message(msg: Message, cls: type[D], **fields: Any) -> D:
    """A domain dataclass from the same-named fields of a message: unset
    optional fields as None, enums as the field's Enum member, repeated as
    tuples; `fields` gives those that need more than a copy."""
    values = dict(fields)
    by_name = msg.DESCRIPTOR.fields_by_name
    for f in dataclasses.fields(cls):
        if f.name in values or f.name not in by_name:
            continue
        d = by_name[f.name]
        if d.has_presence and not is_repeated(d) and not msg.HasField(f.name):
            values[f.name] = None
        elif is_repeated(d):
            values[f.name] = tuple(getattr(msg, f.name))
        elif d.enum_type is not None:
            name, kind = enum_name(d, getattr(msg, f.name)), _enum_of(cls, f.name)
            values[f.name] = None if name is None else kind[name] if kind else name.lower()
        else:
            values[f.name] = getattr(msg, f.name)
    return cls(**values)


# --- rules, moves, records ---------------------------------------------------------

def rules_from_proto(msg: pb.Rules, field: str) -> Rules:
    try:
        return record.rules_from_proto(msg)
    except CirullaError as e:
        raise bad_request(e, field) from None


def move_from_proto(msg: pb.Move, rules: Rules, field: str) -> Move:
    try:
        return record.move_from_proto(msg, rules.matta_card)
    except CirullaError as e:
        raise bad_request(e, field) from None


def move_to_proto(move: Move) -> pb.Move:
    return record.move_to_proto(move)


class _Reader:
    """Cards and moves read from a message, each problem noted under its path."""

    def __init__(self) -> None:
        self.problems = Problems()

    def card(self, text: str, field: str) -> Card | None:
        try:
            return Card.parse(text)
        except CirullaError as e:
            self.problems.add(field, e.reason)
            return None

    def cards(self, texts: Iterable[str], field: str) -> tuple[Card, ...]:
        parsed = [self.card(t, f"{field}[{i}]") for i, t in enumerate(texts)]
        return tuple(c for c in parsed if c is not None)

    def rows(self, holdings: Sequence[pb.Holding], field: str) -> Row | None:
        """A per-seat (or per-side) row of holdings; None if left out."""
        if not holdings:
            return None
        return tuple(self.cards(h.cards, f"{field}[{s}].cards") for s, h in enumerate(holdings))

    def move(self, msg: pb.Move, rules: Rules, field: str) -> Move | None:
        return self.problems.check(move_from_proto, msg, rules, field)


def check_record(msg: pb.Record, field: str = "record") -> None:
    """BadRequest unless the message is a record at all: a header the rules
    accept, events made of cards and moves (whether they are legal is for the
    replay to judge)."""
    read = _Reader()
    rules = read.problems.check(rules_from_proto, msg.rules, f"{field}.rules")
    if rules is not None:
        if not 0 <= msg.first_dealer < rules.players:
            read.problems.add(f"{field}.first_dealer", f"{msg.first_dealer} is not a seat 0..{rules.players - 1}")
        if msg.player_names and len(msg.player_names) != rules.players:
            read.problems.add(f"{field}.player_names", f"{len(msg.player_names)} names for {rules.players} players")
    if msg.schema_version not in record.SCHEMAS:
        read.problems.add(f"{field}.schema_version",
                          f"{msg.schema_version} is not one of {', '.join(map(str, record.SCHEMAS))}")
    for i, ev in enumerate(msg.events):
        f = f"{field}.events[{i}]"
        kind = ev.WhichOneof("kind")
        if kind == "deal":
            read.cards(ev.deal.table, f"{f}.deal.table")
            for s, h in enumerate(ev.deal.hands):
                read.cards(h.cards, f"{f}.deal.hands[{s}].cards")
        elif kind == "turn":
            m = ev.turn.move
            for name in ("captured", "declared", "declared_second"):
                read.cards(getattr(m, name), f"{f}.turn.move.{name}")
            if m.card:
                read.card(m.card, f"{f}.turn.move.card")
            elif not m.declared and not m.text:
                read.problems.add(f"{f}.turn.move", "a move needs a card, declared cards or its text")
        elif kind == "hand_end":
            read.cards(ev.hand_end.leftover, f"{f}.hand_end.leftover")
        else:
            read.problems.add(f, "an empty event: set one of deal, turn, hand_end")
        if len(read.problems.items) >= 20:
            break
    read.problems.raise_any()


def record_from_proto(msg: pb.Record, field: str = "record") -> Match:
    """The match a record describes, replayed through the rules, or BadRequest
    naming the event and field at fault (``record.events[7].turn.move``)."""
    check_record(msg, field)
    try:
        return record.from_proto(msg)
    except CirullaError as e:
        raise bad_request(e, field) from None


# --- seat views ----------------------------------------------------------------------

def view_from_proto(msg: pb.SeatView, field: str = "view", known: Sequence[tuple[str, str]] = ()) -> SeatView:
    """The checked SeatView of a message, with every field the client left out
    filled in by the rules (cirulla.solver.view_builder), or one BadRequest
    naming every field at fault. `known`: problems the caller found (numbers
    out of range), paths relative to the view; with any, nothing is replayed."""
    if msg.ByteSize() == 0 and not known:   # left out (`{}`): no position to replay, so no history to blame
        raise BadRequest.one(field, "required: the seat's view, at least its hand and the table "
                                    "(docs/client-guide.md, \"The smallest request\")")
    read = _Reader()                        # its paths are relative to the view
    rules = read.problems.check(rules_from_proto, msg.rules, "rules")
    matta_as = None
    if msg.matta_as:
        if len(msg.matta_as) != 1 or msg.matta_as.upper() not in RANKS:
            read.problems.add("matta_as", f"{msg.matta_as!r} is not a rank ({' '.join(RANKS)})")
        else:
            matta_as = RANKS.index(msg.matta_as.upper())
    hand = read.cards(msg.hand, "hand")
    table = read.cards(msg.table, "table")
    public = read.rows(msg.public, "public")
    piles = read.rows(msg.piles, "piles")
    played_this_round = read.rows(msg.played_this_round, "played_this_round")
    history = _history_from_proto(msg, read, rules, "history") if rules else ()
    try:
        if rules is None:
            raise ViewError([*read.problems.items, *known])
        return build_view(
            rules, seat=msg.seat, dealer=msg.dealer, hand=hand, table=table, to_move=msg.to_move,
            scores=tuple(msg.scores), history=history, hand_number=msg.hand_number, round=msg.round,
            hand_sizes=tuple(msg.hand_sizes), stock_size=msg.stock_size, scope=tuple(msg.scope),
            declarations=tuple(msg.declarations), declared=tuple(msg.declared),
            last_capturer=msg.last_capturer if msg.HasField("last_capturer") else None,
            public=public, piles=piles, played_this_round=played_this_round, matta_as=matta_as,
            known_problems=[*read.problems.items, *known])
    except CirullaError as e:
        raise bad_request(e, field) from None


def _history_from_proto(msg: pb.SeatView, read: _Reader, rules: Rules, field: str) -> tuple[Event, ...]:
    events: list[Event] = []
    for i, ev in enumerate(msg.history):
        f = f"{field}[{i}]"
        kind = ev.WhichOneof("kind")
        if kind == "deal":
            d = ev.deal
            events.append(Deal(d.hand, d.round, d.dealer, read.cards(d.table, f"{f}.deal.table"),
                               tuple(read.cards(h.cards, f"{f}.deal.hands[{s}].cards")
                                     for s, h in enumerate(d.hands)),
                               d.void, d.dealer_scope, d.capotun))
        elif kind == "turn":
            move = read.move(ev.turn.move, rules, f"{f}.turn.move")
            if move is not None:
                events.append(Turn(ev.turn.seat, move, ev.turn.scopa))
        elif kind == "hand_end":
            h = ev.hand_end
            events.append(HandEnd(h.hand, read.cards(h.leftover, f"{f}.hand_end.leftover"), h.leftover_side,
                                  tuple(SideScore(**{k: getattr(s, k) for k in _SIDE_SCORE}) for s in h.sides),
                                  h.cappotto_side))
        else:
            read.problems.add(f, "an empty event: set one of deal, turn")
    return tuple(events)


_SIDE_SCORE = [f.name for f in dataclasses.fields(SideScore)]


def view_to_proto(view: SeatView) -> pb.SeatView:
    return to_message(view, pb.SeatView,
                      last_capturer=None if view.last_capturer < 0 else view.last_capturer,
                      matta_as=None if view.matta_as is None else RANKS[view.matta_as])


def language_from_proto(tag: str, field: str = "language") -> Translations:
    """The translator of a request's language tag (BCP 47; empty: English), or
    BadRequest naming the field."""
    try:
        return translator(tag)
    except ValueError as e:
        raise BadRequest.one(field, str(e)) from None


# --- search results --------------------------------------------------------------------

def hint_to_proto(result: SearchResult, seed: int, *, table: Sequence[Card], tr: Translations) -> epb.Hint:
    """A search's ranking (final or interim) as a Hint, its top moves with
    their reasons in the language of `tr` (`table`: the position's, before
    the move; cirulla.solver.reasons.hint_reasons)."""
    hint = to_message(result, epb.Hint, stats=stats_to_proto(result, seed))
    for msg, reason in zip(hint.moves, hint_reasons(result, table, tr), strict=True):
        msg.reason = reason
    return hint


def stats_to_proto(result: SearchResult, seed: int) -> epb.EngineStats:
    return to_message(result, epb.EngineStats, seed=seed)


# --- analysis -------------------------------------------------------------------------

def decision_to_proto(d: Decision, tr: Translations | None = None) -> apb.DecisionAnalysis:
    """A decision as a DecisionAnalysis, an error's reason in the language of
    `tr` (English, as the analysis wrote it, by default)."""
    judgement = "forced" if d.forced else d.judgement or "good"
    if tr is not None and d.reason:
        d = dataclasses.replace(d, reason=explain(d, tr))
    return to_message(d, apb.DecisionAnalysis, judgement=judgement)


def decision_from_proto(msg: apb.DecisionAnalysis, rules: Rules) -> Decision:
    def move(m: pb.Move) -> Move:          # the text gives the move, the message its points
        return dataclasses.replace(move_from_proto(m, rules, "decision"), points=m.points)

    def categories(m: epb.CategoryPoints) -> dict[str, float]:
        return {c: getattr(m, c) for c in CATEGORIES}

    judgement = enum_name(msg.DESCRIPTOR.fields_by_name["judgement"], msg.judgement)   # FORCED, GOOD, ...
    position = from_message(msg.position, Position, **{
        f: tuple(Card.parse(c) for c in getattr(msg.position, f)) for f in ("hand", "table", "unseen")})
    return from_message(msg, Decision, played=move(msg.played), best=move(msg.best),
                        hindsight_best=move(msg.hindsight_best), luck=tuple(msg.luck) or None,
                        judgement=Judgement[judgement] if judgement is not None and judgement in Judgement.__members__
                        else None, position=position, played_categories=categories(msg.played_categories),
                        best_categories=categories(msg.best_categories))


def summary_to_proto(s: Summary) -> apb.AnalysisSummary:
    return to_message(s, apb.AnalysisSummary)


def summary_from_proto(msg: apb.AnalysisSummary) -> Summary:
    return from_message(
        msg, Summary,
        players=tuple(from_message(p, PlayerSummary) for p in msg.players),
        sides=tuple(from_message(x, SideSummary) for x in msg.sides),
        deals=tuple(from_message(x, DealLuck) for x in msg.deals),
        timeline=tuple(from_message(p, TimelinePoint) for p in msg.timeline))


# --- puzzles -------------------------------------------------------------------------

def puzzle_to_proto(p: Puzzle) -> zpb.Puzzle:
    msg = to_message(p, zpb.Puzzle, view=None)         # the view by its own converter
    msg.view.CopyFrom(view_to_proto(p.view))
    return msg


def puzzle_from_proto(msg: zpb.Puzzle, field: str = "puzzle") -> Puzzle:
    """The Puzzle of a message (a line of `cirulla puzzles --out`): its view
    checked and completed as a request's is, its moves read with the view's
    rules; or one BadRequest naming every field at fault."""
    outside = out_of_bounds(msg, field)
    if outside:
        raise BadRequest(outside)
    view = view_from_proto(msg.view, f"{field}.view")
    problems = Problems()

    def move(m: pb.Move, where: str) -> Move | None:
        read = problems.check(move_from_proto, m, view.rules, f"{field}.{where}")
        return None if read is None else dataclasses.replace(read, points=m.points)

    solution = move(msg.solution, "solution")
    others = [move(o.move, f"others[{i}].move") for i, o in enumerate(msg.others)]
    played = move(msg.source.played, "source.played") if msg.source.HasField("played") else None
    problems.raise_any()
    assert solution is not None and all(m is not None for m in others)
    return from_message(
        msg, Puzzle, view=view, solution=solution,
        others=tuple(from_message(o, PuzzleMove, move=m) for o, m in zip(msg.others, others, strict=True)),
        source=from_message(msg.source, PuzzleSource, played=played or solution))


def puzzle_hint_request(msg: zpb.Puzzle, *, seed: int = 0) -> epb.GetHintRequest:
    """The GetHint request for a puzzle's position (the default budget): its view as
    it is, the hint's reasons in the puzzle's language."""
    return epb.GetHintRequest(view=msg.view, seed=seed, language=msg.language)


# --- match states and engine info -----------------------------------------------------

def match_state_to_proto(match: Match) -> rpb.MatchState:
    n, sides = match.rules.players, match.rules.n_sides
    return to_message(
        match, rpb.MatchState,
        hands=[match.hand(s) for s in range(n)], public=[match.public(s) for s in range(n)],
        piles=[match.pile(s) for s in range(sides)],
        hand_points=[pb.SideScore(side=s, total=sum(row.values()), match_total=match.scores[s], **row)
                     for s, row in enumerate(match.hand_points())])


def engine_info_to_proto(*, version: str, config: ServerConfig, strengths: Iterable[tuple[epb.Strength, Level]],
                         tr: Translations) -> epb.GetEngineInfoResponse:
    """`strengths`: each Strength served and its level, weakest first (with its
    rating from players.RATINGS), its label and about in `tr`'s language."""
    strengths = list(strengths)
    options = [epb.RuleOption(name=f.name, values=list(CHOICES[f.name]) if f.name in CHOICES else
                              ["true", "false"] if f.type == "bool" else [])
               for f in dataclasses.fields(Rules) if f.name != "name"]
    return epb.GetEngineInfoResponse(
        version=version,
        presets=[epb.Preset(name=name, rules=record.rules_to_proto(Rules.preset(name))) for name in PRESETS],
        options=options,
        player_counts=sorted({2, 3, 4, *(Rules.preset(p).players for p in PRESETS)}),
        strengths=[number for number, _ in strengths],
        strength_info=[epb.StrengthInfo(strength=number, name=lv.name, label=tr.gettext(lv.name),
                                        about=tr.gettext(lv.about), iterations=lv.iterations or 0,
                                        rating=RATINGS[lv.name].points, rating_low=RATINGS[lv.name].low,
                                        rating_high=RATINGS[lv.name].high, rating_pairs=RATINGS[lv.name].pairs)
                       for number, lv in strengths],
        max_time_ms=config.max_budget_ms, max_iterations=config.max_iterations,
        max_threads=config.thread_cap, default_time_ms=config.default_budget_ms,
        max_concurrent_searches=config.max_concurrent_searches,
        max_message_bytes=config.max_message_bytes,
        default_budget=epb.Budget(iterations=DEFAULT_BUDGET.iterations or 0, time_ms=config.default_budget_ms),
        stopping_rule=to_message(DEFAULT_BUDGET.stopping, epb.StoppingRule),
        languages=list(LANGUAGES))
