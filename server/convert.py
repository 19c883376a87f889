"""Protobuf <-> domain objects: the one module of the server that does it.

Reading checks as it goes and collects every problem as a field violation
named by its path in the request (`view.hand[2]`: unknown card 'ZZ'), then
raises one BadRequest; a message never reaches the domain half-read.
"""
from __future__ import annotations

import dataclasses

from cirulla.solver import record
from cirulla.solver.cards import RANKS, Card
from cirulla.solver.errors import CirullaError
from cirulla.solver.events import CATEGORIES, Deal, HandEnd, SideScore, Turn
from cirulla.solver.match import Match
from cirulla.solver.moves import Move
from cirulla.solver.rules import ACE_ON_ACE, CAPTURE, DECLARATIONS, MATTA, PRESETS, Rules
from cirulla.solver.view import SeatView
from cirulla.v1 import engine_service_pb2 as epb
from cirulla.v1 import game_pb2 as pb
from cirulla.v1 import rules_service_pb2 as rpb

from .errors import BadRequest

# Bounds on counts the view's own check does not cover; beyond them a number
# cannot come from a real match and would only feed the search nonsense.
MAX_HAND_NUMBER = 1000
MAX_SCORE = 10_000
MAX_HAND_POINTS = 100
MAX_ROUND = 12


class _Problems:
    """Field violations collected while reading one request."""

    def __init__(self):
        self.items: list[tuple[str, str]] = []

    def add(self, field: str, problem: str) -> None:
        self.items.append((field, problem))

    def card(self, text: str, field: str) -> Card | None:
        try:
            return Card.parse(text)
        except CirullaError as e:
            self.add(field, str(e))
            return None

    def cards(self, texts, field: str) -> tuple[Card, ...]:
        parsed = [self.card(t, f"{field}[{i}]") for i, t in enumerate(texts)]
        return tuple(c for c in parsed if c is not None)

    def check(self) -> None:
        if self.items:
            raise BadRequest(self.items)


# --- rules ---

def rules_from_proto(msg: pb.Rules, field: str) -> Rules:
    try:
        return record.rules_from_proto(msg)
    except CirullaError as e:
        raise BadRequest.one(field, str(e)) from None


# --- seat views ---

def view_from_proto(msg: pb.SeatView, field: str = "view") -> SeatView:
    """A checked SeatView (SeatView.validate() and more), or BadRequest."""
    p = _Problems()
    rules = rules_from_proto(msg.rules, f"{field}.rules")
    matta_as = None
    if msg.matta_as:
        if msg.matta_as.upper() not in RANKS or len(msg.matta_as) != 1:
            p.add(f"{field}.matta_as", f"{msg.matta_as!r} is not a rank ({' '.join(RANKS)})")
        else:
            matta_as = RANKS.index(msg.matta_as.upper())
    for name in ("seat", "to_move", "dealer"):
        if not 0 <= getattr(msg, name) < rules.players:
            p.add(f"{field}.{name}", f"{getattr(msg, name)} is not a seat 0..{rules.players - 1}")
    for name, limit in (("hand_number", MAX_HAND_NUMBER), ("round", MAX_ROUND)):
        if not 0 <= getattr(msg, name) <= limit:
            p.add(f"{field}.{name}", f"{getattr(msg, name)} is out of range 0..{limit}")
    for name, limit in (("scores", MAX_SCORE), ("scope", MAX_HAND_POINTS),
                        ("declarations", MAX_HAND_POINTS)):
        for i, v in enumerate(getattr(msg, name)):
            if not 0 <= v <= limit:
                p.add(f"{field}.{name}[{i}]", f"{v} is out of range 0..{limit}")
    last = msg.last_capturer if msg.HasField("last_capturer") else -1
    if msg.HasField("last_capturer") and not 0 <= last < rules.n_sides:
        p.add(f"{field}.last_capturer", f"{last} is not a side 0..{rules.n_sides - 1}")
    history = _history_from_proto(msg, rules, msg.seat, f"{field}.history", p)
    view = SeatView(
        rules=rules, seat=msg.seat, hand_number=msg.hand_number, dealer=msg.dealer,
        round=msg.round, to_move=msg.to_move,
        hand=p.cards(msg.hand, f"{field}.hand"),
        table=p.cards(msg.table, f"{field}.table"),
        hand_sizes=tuple(msg.hand_sizes), stock_size=msg.stock_size,
        public=tuple(p.cards(h.cards, f"{field}.public[{s}].cards") for s, h in enumerate(msg.public)),
        piles=tuple(p.cards(h.cards, f"{field}.piles[{s}].cards") for s, h in enumerate(msg.piles)),
        scope=tuple(msg.scope), declarations=tuple(msg.declarations), declared=tuple(msg.declared),
        played_this_round=tuple(p.cards(h.cards, f"{field}.played_this_round[{s}].cards")
                                for s, h in enumerate(msg.played_this_round)),
        last_capturer=last, matta_as=matta_as, scores=tuple(msg.scores), history=history)
    p.check()
    try:
        view.validate()
    except CirullaError as e:
        raise BadRequest.one(_view_field(field, str(e)), str(e)) from None
    return view


def _view_field(field: str, message: str) -> str:
    """The field SeatView.validate() blames: its messages start `name:` or `name[i]:`."""
    head, sep, _ = message.partition(":")
    if sep and head.replace("_", "").replace("[", "").replace("]", "").isalnum() and " " not in head:
        return f"{field}.{head}"
    return field


def _history_from_proto(msg: pb.SeatView, rules: Rules, seat: int, field: str, p: _Problems):
    events = []
    for i, ev in enumerate(msg.history):
        f = f"{field}[{i}]"
        kind = ev.WhichOneof("kind")
        if kind == "deal":
            d = ev.deal
            for s, h in enumerate(d.hands):
                if h.cards and s != seat:
                    p.add(f"{f}.deal.hands[{s}]", f"seat {seat}'s view cannot hold seat {s}'s dealt cards")
            events.append(Deal(d.hand, d.round, d.dealer, p.cards(d.table, f"{f}.deal.table"),
                               tuple(p.cards(h.cards, f"{f}.deal.hands[{s}].cards")
                                     for s, h in enumerate(d.hands)),
                               d.void, d.dealer_scope, d.capotun))
        elif kind == "turn":
            move = _move_from_proto(ev.turn.move, rules, f"{f}.turn.move", p)
            if not 0 <= ev.turn.seat < rules.players:
                p.add(f"{f}.turn.seat", f"{ev.turn.seat} is not a seat 0..{rules.players - 1}")
            if move is not None:
                events.append(Turn(ev.turn.seat, move, ev.turn.scopa))
        elif kind == "hand_end":
            h = ev.hand_end
            events.append(HandEnd(h.hand, p.cards(h.leftover, f"{f}.hand_end.leftover"), h.leftover_side,
                                  tuple(_side_score(s) for s in h.sides), h.cappotto_side))
        else:
            p.add(f, "an empty event")
    return tuple(events)


def _side_score(s: pb.SideScore) -> SideScore:
    return SideScore(s.side, *(getattr(s, c) for c in CATEGORIES), match_total=s.match_total)


def _move_from_proto(msg: pb.Move, rules: Rules, field: str, p: _Problems) -> Move | None:
    try:
        return record.move_from_proto(msg, rules.matta_card)
    except CirullaError as e:
        p.add(field, str(e))
        return None


def move_from_proto(msg: pb.Move, rules: Rules, field: str) -> Move:
    p = _Problems()
    move = _move_from_proto(msg, rules, field, p)
    p.check()
    return move


def view_to_proto(view: SeatView) -> pb.SeatView:
    def texts(cards):
        return [str(c) for c in cards]

    def holdings(rows):
        return [pb.Holding(cards=texts(r)) for r in rows]

    msg = pb.SeatView(
        rules=record.rules_to_proto(view.rules), seat=view.seat, hand_number=view.hand_number,
        dealer=view.dealer, round=view.round, to_move=view.to_move, hand=texts(view.hand),
        table=texts(view.table), hand_sizes=view.hand_sizes, stock_size=view.stock_size,
        public=holdings(view.public), piles=holdings(view.piles), scope=view.scope,
        declarations=view.declarations, declared=view.declared,
        played_this_round=holdings(view.played_this_round),
        matta_as="" if view.matta_as is None else RANKS[view.matta_as], scores=view.scores,
        history=[record.event_to_proto(e) for e in view.history])
    if view.last_capturer >= 0:
        msg.last_capturer = view.last_capturer
    return msg


# --- moves and search results ---

def move_to_proto(move: Move) -> pb.Move:
    return record.move_to_proto(move)


def hint_to_proto(result, seed: int, *, cut_short: bool) -> epb.Hint:
    """A search.SearchResult as a Hint (cut_short as the servicer judged it)."""
    return epb.Hint(
        moves=[epb.MoveEvaluation(
            move=move_to_proto(s.move), expected_points=s.expected, expected_points_stderr=s.stderr,
            diff_to_best=s.diff_to_best, diff_to_best_stderr=s.diff_stderr,
            categories=epb.CategoryPoints(**{c: v for c, v in s.categories.items() if c in CATEGORIES}),
            scopa_risk=s.scopa_risk, win_chance=s.win_chance, samples=s.samples)
            for s in result.moves],
        best=move_to_proto(result.best), cut_short=cut_short, stats=stats_to_proto(result, seed),
        ranked_by=epb.RANKED_BY_WIN_CHANCE if getattr(result, "ranked_by", "") == "win_chance"
        else epb.RANKED_BY_EXPECTED_POINTS)


def stats_to_proto(result, seed: int) -> epb.EngineStats:
    return epb.EngineStats(iterations=result.iterations, elapsed_ms=result.elapsed_ms,
                           threads=result.threads, method=result.method, seed=seed)


# --- records and match states ---

def record_from_proto(msg: pb.Record, field: str = "record") -> pb.Record:
    """Check that a record is made of cards and moves (not that they are legal:
    the replay judges that); returns the message itself."""
    p = _Problems()
    rules = rules_from_proto(msg.rules, f"{field}.rules")
    if not 0 <= msg.first_dealer < rules.players:
        p.add(f"{field}.first_dealer", f"{msg.first_dealer} is not a seat 0..{rules.players - 1}")
    if msg.player_names and len(msg.player_names) != rules.players:
        p.add(f"{field}.player_names", f"{len(msg.player_names)} names for {rules.players} players")
    if msg.schema_version != record.SCHEMA_VERSION:
        p.add(f"{field}.schema_version", f"{msg.schema_version} is not {record.SCHEMA_VERSION}")
    for i, ev in enumerate(msg.events):
        f = f"{field}.events[{i}]"
        kind = ev.WhichOneof("kind")
        if kind == "deal":
            p.cards(ev.deal.table, f"{f}.deal.table")
            for s, h in enumerate(ev.deal.hands):
                p.cards(h.cards, f"{f}.deal.hands[{s}].cards")
        elif kind == "turn":
            m = ev.turn.move
            for name in ("captured", "declared", "declared_second"):
                p.cards(getattr(m, name), f"{f}.turn.move.{name}")
            if m.card:
                p.card(m.card, f"{f}.turn.move.card")
            elif not m.declared and not m.text:
                p.add(f"{f}.turn.move", "a move needs a card, declared cards or its text")
        elif kind == "hand_end":
            p.cards(ev.hand_end.leftover, f"{f}.hand_end.leftover")
        else:
            p.add(f, "an empty event")
        if len(p.items) >= 20:
            break
    p.check()
    return msg


def match_state_to_proto(match: Match) -> rpb.MatchState:
    n, sides = match.rules.players, match.rules.n_sides
    texts = lambda cards: [str(c) for c in cards]          # noqa: E731
    msg = rpb.MatchState(
        phase={"deal": rpb.PHASE_DEAL, "play": rpb.PHASE_PLAY, "over": rpb.PHASE_OVER}[match.phase],
        hand_number=match.hand_number, round=match.round, dealer=match.dealer, to_move=match.to_move,
        hands=[pb.Holding(cards=texts(match.hand(s))) for s in range(n)],
        public=[pb.Holding(cards=texts(match.public(s))) for s in range(n)],
        table=texts(match.table),
        piles=[pb.Holding(cards=texts(match.pile(s))) for s in range(sides)],
        stock_size=match.stock_size, scores=match.scores,
        hand_points=[pb.SideScore(side=s, total=sum(row.values()), match_total=match.scores[s], **row)
                     for s, row in enumerate(match.hand_points())],
        legal_moves=[move_to_proto(m) for m in match.legal_moves])
    if match.winner is not None:
        msg.winner = match.winner
    return msg


# --- engine info ---

def engine_info_to_proto(*, version: str, config, strengths) -> epb.GetEngineInfoResponse:
    options = []
    for f in dataclasses.fields(Rules):
        values = {"capture": CAPTURE, "ace_on_ace": ACE_ON_ACE, "declarations": DECLARATIONS,
                  "matta": MATTA}.get(f.name)
        if f.name == "name":
            continue
        if values is None:
            values = ("true", "false") if f.type == "bool" else ()
        options.append(epb.RuleOption(name=f.name, values=list(values)))
    return epb.GetEngineInfoResponse(
        version=version,
        presets=[epb.Preset(name=name, rules=record.rules_to_proto(Rules.preset(name)))
                 for name in PRESETS],
        options=options,
        player_counts=sorted({2, 3, 4, *(Rules.preset(p).players for p in PRESETS)}),
        strengths=list(strengths),
        max_time_ms=config.max_budget_ms, max_iterations=config.max_iterations,
        max_threads=config.max_threads, default_time_ms=config.default_budget_ms,
        max_concurrent_searches=config.max_concurrent_searches,
        max_message_bytes=config.max_message_bytes)
