"""Malformed requests to every RPC of a `cirulla-server`, and the judge of its answers.

Shared by `tests/test_fuzz.py` (a few thousand requests in CI) and
`bench/soak.py` (100,000 on demand). Both put `tests/` on `sys.path` (pytest
does it for the tests; the script does it itself) and import this module as
`fuzz.malformed`; it reads real positions from `tests/server_support.py`.

`Generator(seed).case(i)` is the i-th request of a run: the same for the same
seed and index whatever ran before it (each case has its own
`random.Random(f"{seed}/{i}")`), so a failure reproduces from the two numbers
its report prints: `python bench/soak.py --seed S --case I` sends that one
request again and prints it with the answer.

A case is a valid request built from a real position or record (several
presets), then knocked out of shape:
- structurally, through the message's descriptor (any RPC's request, any
  depth): scalars set to out-of-range numbers, unknown enum numbers, bad
  cards, huge strings, repeated fields emptied, reordered or blown up to tens
  of thousands of elements, sub-messages cleared, oneofs switched; and a
  quarter of the time an integer field, each as likely however deep, set to
  an extreme of its type (EXTREMES: 0, -1, 2^30, 2^31-1, -2^31, 2^32-1,
  2^63-1, -2^63, 2^64-1, those that fit);
- on the wire: truncated, bytes flipped or spliced, fields of the wrong wire
  type, strings that are not UTF-8, deeply nested groups, lengths past the
  end, overlong varints, invalid tags, integer fields at the extremes of their
  types merged into the messages already there (a deal of the history);
- or replaced: random bytes, another RPC's request, nothing at all.
Every RPC gets them: EngineService (GetHint, StreamHint, ChooseMove,
GetEngineInfo), RulesService (ListLegalMoves, ReplayRecord), AnalysisService
(AnalyzeGame, tiny budgets), server reflection v1 and v1alpha (streams of
one to three messages), health (Check; Watch opened, its first answer read,
closed), and methods that do not exist.

`judge` names what is wrong with an answer (README, "The gRPC service"):
a status the RPC does not document (never INTERNAL or UNKNOWN; UNIMPLEMENTED
only for unknown methods; NOT_FOUND only for Check's unknown service), an
INVALID_ARGUMENT without a google.rpc.BadRequest or with a violation whose
field is empty or not a field of the request (the lenient decoding's `request`
aside, and that only for bytes that do not decode), a RESOURCE_EXHAUSTED that
is not one of the documented caps, an OK answer that does not decode; and a
slow request: one that cost the server more than SLOW_SECONDS of CPU
(AnalyzeGame: ANALYSIS_SECONDS more), or got no answer within the call's
deadline (DEADLINE_SECONDS, a bit over the bound: a hang costs the run that,
not minutes).

What a request cost is the server's CPU time (all its threads, from
/proc/<pid>/stat) between sending it and its answer: the request's own when it
is the only one in flight (tests/test_fuzz.py, `bench/soak.py --jobs 1`). With
several in flight each is billed the CPU of all of them meanwhile: an upper
bound, so a slow request is never missed, but one that ran beside it may be
named with it (`bench/soak.py --case I` sends one alone to tell them apart).
Where the CPU cannot be read (a server not started here) the wall time stands
in. A request that gets no answer while the server keeps working on it (or
any, where the server's CPU is not known) stops the run (`Tally.stopped`):
what came after would be billed its CPU. The request after which the server's
peak RSS passed SERVER_RSS_BOUND_MIB is a defect too.
"""
from __future__ import annotations

import functools
import math
import os
import random
import re
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import grpc
from google.protobuf import text_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2

from cirulla.server.errors import field_violations
from cirulla.server.service import Service
from cirulla.solver import Match, Rules, record
from cirulla.solver.cards import RANKS, SUITS
from cirulla.solver.players import GreedyPlayer
from cirulla.v1 import analysis_service_pb2 as apb
from cirulla.v1 import engine_service_pb2 as epb
from cirulla.v1 import game_pb2 as pb
from cirulla.v1 import rules_service_pb2 as rpb
from server_support import choice_position, position, view_msg

# The server the fuzzing runs against: searches kept short (a request without a
# budget gets 20 ms, none may ask more than 100 ms or 2,000 iterations, an
# analysis past about a second is refused), messages capped at 256 KiB so that
# the blown-up requests cross the cap cheaply.
MAX_MESSAGE_BYTES = 256 * 1024
GRACE_SECONDS = 2.0
SERVER_FLAGS = ("--grace-seconds", str(GRACE_SECONDS), "--warm-presets", "classic",
                "--default-budget-ms", "20", "--max-budget-ms", "100", "--max-iterations", "2000",
                "--max-analysis-seconds", "1", "--max-threads", "1",
                "--max-message-bytes", str(MAX_MESSAGE_BYTES))
# after SIGTERM: the grace, a second for the answers to go out, three for grpcio (server/app.py), then some
STOP_WITHIN = GRACE_SECONDS + 1 + 3 + 2
# A request that costs the server more CPU than this is a defect (a slow input): twenty times the 0.1 s
# the flags above let a search take, so that a busy machine never trips it. An analysis may take longer
# by design (cut at twice its 1 s cap): ANALYSIS_SECONDS more.
SLOW_SECONDS = 2.0
ANALYSIS_SECONDS = 2.0
# Each call's deadline: a bit over the bound, so that a request that hangs the server costs the run this
# long, not minutes, and is a defect of its own ("no answer within").
DEADLINE_SECONDS = SLOW_SECONDS + ANALYSIS_SECONDS + 1.0
# The server's peak resident memory past which the request that took it there is a defect (4,000 of
# these requests take it to 64 MiB, 100,000 under 100 MiB: docs/operations.md).
SERVER_RSS_BOUND_MIB = 1024

CORE = frozenset({"OK", "INVALID_ARGUMENT", "RESOURCE_EXHAUSTED"})
# What a RESOURCE_EXHAUSTED may say: grpcio's message size caps and its queue
# of calls, the search slots, the stream caps, an analysis stopped at twice its cap.
CAPS = re.compile(r"message larger than max|Concurrent RPC limit|search threads|streams are open|"
                  r"ran past twice the server's cap")


@dataclass(frozen=True)
class Rpc:
    name: str                       # "EngineService/GetHint", "Health/Check", "v1.ServerReflection/..."
    method: str                     # the path on the wire
    shape: str                      # unary, server_stream, watch (a server stream left open), bidi
    request: type[Message]
    response: type[Message] | None
    codes: frozenset[str] = CORE    # the documented status codes
    weight: int = 10                # its share of the cases
    extra_seconds: float = 0.0      # what it may cost past SLOW_SECONDS

    @property
    def slow_bound(self) -> float:
        return SLOW_SECONDS + self.extra_seconds


def _rpc(service: str, name: str, shape: str, request: type[Message], response: type[Message] | None,
         codes: frozenset[str] = CORE, weight: int = 10, extra_seconds: float = 0.0) -> Rpc:
    short = service.rpartition(".")[2]                 # EngineService, Health
    if service.startswith("grpc.reflection."):
        short = service.split(".")[2] + "." + short    # v1.ServerReflection, v1alpha.ServerReflection
    return Rpc(f"{short}/{name}", f"/{service}/{name}", shape, request, response, codes, weight, extra_seconds)


REFLECTION_REQUEST = reflection_pb2.ServerReflectionRequest
RPCS = (
    _rpc("cirulla.v1.EngineService", "GetHint", "unary", epb.GetHintRequest, epb.GetHintResponse, weight=12),
    _rpc("cirulla.v1.EngineService", "StreamHint", "server_stream", epb.StreamHintRequest, epb.StreamHintResponse,
         weight=7),
    _rpc("cirulla.v1.EngineService", "ChooseMove", "unary", epb.ChooseMoveRequest, epb.ChooseMoveResponse, weight=9),
    _rpc("cirulla.v1.EngineService", "GetEngineInfo", "unary", epb.GetEngineInfoRequest, epb.GetEngineInfoResponse,
         weight=4),
    _rpc("cirulla.v1.RulesService", "ListLegalMoves", "unary", rpb.ListLegalMovesRequest,
         rpb.ListLegalMovesResponse, weight=16),
    _rpc("cirulla.v1.RulesService", "ReplayRecord", "unary", rpb.ReplayRecordRequest, rpb.ReplayRecordResponse,
         weight=14),
    _rpc("cirulla.v1.AnalysisService", "AnalyzeGame", "server_stream", apb.AnalyzeGameRequest,
         apb.AnalyzeGameResponse, weight=5, extra_seconds=ANALYSIS_SECONDS),
    _rpc("grpc.health.v1.Health", "Check", "unary", health_pb2.HealthCheckRequest, health_pb2.HealthCheckResponse,
         CORE | {"NOT_FOUND"}, weight=6),
    _rpc("grpc.health.v1.Health", "Watch", "watch", health_pb2.HealthCheckRequest, health_pb2.HealthCheckResponse,
         weight=4),
    _rpc("grpc.reflection.v1.ServerReflection", "ServerReflectionInfo", "bidi", REFLECTION_REQUEST,
         reflection_pb2.ServerReflectionResponse, weight=5),
    _rpc("grpc.reflection.v1alpha.ServerReflection", "ServerReflectionInfo", "bidi", REFLECTION_REQUEST,
         reflection_pb2.ServerReflectionResponse, weight=5),
    Rpc("unknown_method", "", "unary", epb.GetHintRequest, None, frozenset({"UNIMPLEMENTED"}), weight=3),
)
RPC = {r.name: r for r in RPCS}

CARDS = [r + s for s in SUITS for r in RANKS]
BAD_CARDS = ["", " ", "ZZ", "7", "10D", "7DD", "7X", "X7", "Z♦", "7♦♦", "AD ", " 7h", "\x00", "é", "7\u0301D",
             "\u202e7D", "😀😀", "7D x 2C", "declare 2S", "null", "-1", "%s%n", "\ufffd\ufffd", "A" * 300]
RANK_TEXTS = [*RANKS, *RANKS.lower(), "", "10", "Z", "0", "AA", "7D", "♦", "\x00"]
MOVE_TEXTS = ["7C x 2C 5S", "7C", "declare 2S 5C 7H=A", "declare 3C 3D 3S + 2S 5C 7H=A", "AD x", "x 2C",
              "7C x 7C", "declare", "declare 7H=Z", "7H=A", "KD x QS AD AH AC AS 2D 2H", "QD x QS", "pass", ""]
NAMES = ["", "classic", "online", "relaxed", "extended", "cirullone", "five", "CLASSIC", "x", "cirulla.v1.SeatView",
         "cirulla.v1.EngineService", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
         "cirulla/v1/game.proto", "google/protobuf/descriptor.proto", "..", "/etc/passwd", "\x00", "é" * 40,
         "\U0001F0CF" * 10, "a.b.c.d.e.f.g", ".", "cirulla.v1.", "cirulla.v1.SeatView.hand"]
INT32 = [0, 1, -1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 20, 35, 36, 39, 40, 41, 51, 52, 100, 101, 301, 302, 1000, 60_000,
         60_001, 1 << 15, 2**31 - 1, -2**31]
INT64 = [*INT32, 2000, 2001, 5_000_000, 5_000_001, 2**32, 2**62, 2**63 - 1, -2**63]
UINT32 = [0, 1, 7, 2**31, 2**32 - 1]
UINT64 = [0, 1, 7, 2**31, 2**32, 2**63, 2**64 - 1]
# The edges of the integer types: each integer field gets those of its own type (EXTREME_SHARE of the
# structural mutations, and on the wire). A deal's round at 2^30 in a view's history hung the server.
EXTREMES = (0, -1, 2**30, 2**31 - 1, -2**31, 2**32 - 1, 2**63 - 1, -2**63, 2**64 - 1)
_INT32, _INT64 = (-2**31, 2**31 - 1), (-2**63, 2**63 - 1)
INT_RANGES = {FieldDescriptor.TYPE_INT32: _INT32, FieldDescriptor.TYPE_SINT32: _INT32,
              FieldDescriptor.TYPE_SFIXED32: _INT32, FieldDescriptor.TYPE_INT64: _INT64,
              FieldDescriptor.TYPE_SINT64: _INT64, FieldDescriptor.TYPE_SFIXED64: _INT64,
              FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1), FieldDescriptor.TYPE_FIXED32: (0, 2**32 - 1),
              FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1), FieldDescriptor.TYPE_FIXED64: (0, 2**64 - 1)}
EXTREME_SHARE = 0.25
DOUBLES = [0.0, -0.0, 1.5, -1.0, 1e308, -1e308, math.inf, -math.inf, math.nan, 5e-324]
CARD_FIELDS = {"hand", "table", "cards", "captured", "declared", "declared_second", "leftover", "card"}
SERVICES = ["", "cirulla.v1.EngineService", "cirulla.v1.RulesService", "cirulla.v1.AnalysisService",
            "grpc.health.v1.Health", "no.such.Service"]
UNKNOWN_METHODS = ["/cirulla.v1.EngineService/Nope", "/cirulla.v1.RulesService/GetHint",
                   "/cirulla.v1.EngineService/gethint", "/no.such.Service/Method", "/grpc.health.v1.Health/Nope",
                   "/grpc.reflection.v1.ServerReflection/Nope", "/cirulla.v1.EngineService/",
                   "/cirulla.v1.AnalysisService/AnalyzeGame/x", "/cirulla.v2.EngineService/GetHint"]


# --- the valid requests the cases start from -------------------------------------------

def _played(rules: Rules, seed: int, plies: int) -> Match:
    match = Match(rules, seed=seed)
    greedy = GreedyPlayer()
    for _ in range(plies):
        if match.is_over:
            break
        match.play(greedy.choose(match))
    return match


def _minimal(view: pb.SeatView) -> pb.SeatView:
    """The smallest view a client sends (README): the rest left to the server."""
    small = pb.SeatView()
    small.CopyFrom(view)
    for name in ("hand_sizes", "stock_size", "public", "piles", "scope", "declarations", "declared",
                 "played_this_round", "last_capturer"):
        small.ClearField(name)
    return small


def base_views() -> list[pb.SeatView]:
    """Views of the seat to move from real positions: several presets and player
    counts, early and late in a hand, a second hand; full and minimal. Each is
    one the server accepts (checked here)."""
    matches = [choice_position(3), choice_position(5)]
    matches += [position(seed, plies) for seed, plies in ((1, 0), (2, 5), (3, 11), (4, 17), (5, 24), (6, 31))]
    for rules, plies in ((Rules(players=3), 4), (Rules(players=4), 7), (Rules.preset("cirullone"), 3),
                         (Rules.preset("five"), 6), (Rules.preset("online"), 2), (Rules.preset("relaxed"), 9),
                         (Rules(capture="optional", matta="none"), 5)):
        matches.append(position(11, plies, rules))
    matches.append(_played(Rules(), 21, 40))                # into the second hand
    views = []
    for match in matches:
        if match.is_over or not match.legal_moves:
            continue
        full = view_msg(match)
        for view in (full, _minimal(full)):
            try:
                Service._view_to_move(view)
            except Exception:           # noqa: BLE001 - a base must be valid; this one is not: left out
                continue
            views.append(view)
    return views


def base_records() -> list[pb.Record]:
    """Records of short greedy matches (one hand), whole and cut after some
    event (unfinished records are valid too): several presets."""
    records = []
    for i, rules in enumerate((Rules(hands=1), Rules(players=3, hands=1), Rules(players=4, hands=1),
                               Rules.preset("cirullone", hands=1), Rules.preset("five", hands=1),
                               Rules.preset("relaxed", hands=1))):
        match = _played(rules, 40 + i, 10_000)
        whole = record.to_proto(match)
        records.append(whole)
        for cut in (1, 2, 5, 9, 13, 20, 30):
            part = pb.Record()
            part.CopyFrom(whole)
            del part.events[cut:]
            part.ClearField("winner")
            records.append(part)
    return [r for r in records if _replays(r)]


def _replays(msg: pb.Record) -> bool:
    try:
        record.from_proto(msg)
        return True
    except Exception:                   # noqa: BLE001 - a base must be valid
        return False


# --- the cases ---------------------------------------------------------------------------

@dataclass
class Case:
    seed: int
    index: int
    rpc: Rpc
    method: str
    mutation: str                   # what was done to the valid request
    messages: list[bytes]           # the request (unary), or the stream's messages

    def describe(self, limit: int = 3000) -> str:
        parts = []
        for i, data in enumerate(self.messages):
            try:
                text = text_format.MessageToString(self.rpc.request.FromString(data), as_one_line=True)
            except Exception:           # noqa: BLE001 - not the message: shown as bytes
                text = f"{len(data)} bytes that do not decode: {data[:160].hex()}" + ("…" if len(data) > 160 else "")
            if len(text) > limit:
                text = text[:limit] + f"… ({len(data)} bytes)"
            parts.append(f"  message {i + 1}: {text}" if len(self.messages) > 1 else f"  request: {text}")
        return (f"seed {self.seed} case {self.index}: {self.rpc.name} {self.method} ({self.mutation})\n"
                + "\n".join(parts))


class Generator:
    """The cases of one seed (thread-safe: each case builds its own copies)."""

    def __init__(self, seed: int):
        self.seed = seed
        self.views = [v.SerializeToString() for v in base_views()]
        self.records = [r.SerializeToString() for r in base_records()]
        self.short_records = [r for r in self.records if len(pb.Record.FromString(r).events) <= 13]
        self._weights = [r.weight for r in RPCS]

    def case(self, index: int) -> Case:
        rng = random.Random(f"{self.seed}/{index}")
        rpc = rng.choices(RPCS, self._weights)[0]
        method = rpc.method
        if rpc.name == "unknown_method":
            method = rng.choice(UNKNOWN_METHODS) if rng.random() < 0.8 else \
                "/" + "".join(rng.choice("abcxyz.v1/_") for _ in range(rng.randrange(1, 40)))
        if rpc.shape == "bidi":
            messages, notes = [], []
            for _ in range(rng.choice((1, 1, 2, 3))):
                data, note = self._request(rng, rpc)
                messages.append(data)
                notes.append(note)
            return Case(self.seed, index, rpc, method, " | ".join(notes), messages)
        data, note = self._request(rng, rpc)
        return Case(self.seed, index, rpc, method, note, [data])

    def cases(self, indices: Iterable[int]) -> Iterable[Case]:
        return (self.case(i) for i in indices)

    # the valid request, then what is done to it
    def _request(self, rng: random.Random, rpc: Rpc) -> tuple[bytes, str]:
        msg = self.valid(rng, rpc)
        r = rng.random()
        if r < 0.05:
            return msg.SerializeToString(), "valid"
        if r < 0.62:
            notes = [mutate(rng, msg) for _ in range(rng.choice((1, 1, 1, 2, 3)))]
            return msg.SerializeToString(), "; ".join(notes)
        if r < 0.92:
            note = ""
            if rng.random() < 0.3:
                note = mutate(rng, msg) + "; "
            data, wire = wire_mutation(rng, msg.SerializeToString(), type(msg))
            return data, note + wire
        if r < 0.96:
            n = rng.choice((1, 3, 10, 100, 1000, 5000))
            return rng.randbytes(rng.randrange(n + 1)), "random bytes"
        if r < 0.985:
            other = rng.choice([x for x in RPCS if x.request is not rpc.request and x.name != "unknown_method"])
            return self.valid(rng, other).SerializeToString(), f"the request of {other.name}"
        return b"", "no bytes (the default message)"

    def valid(self, rng: random.Random, rpc: Rpc) -> Message:
        """A valid request of this RPC, from the real positions and records."""
        def view() -> pb.SeatView:
            return pb.SeatView.FromString(rng.choice(self.views))

        def budget() -> epb.Budget:
            return epb.Budget(iterations=rng.choice((20, 50, 100))) if rng.random() < 0.6 else \
                epb.Budget(time_ms=rng.choice((10, 20, 30)))
        seed = rng.randrange(2**64) if rng.random() < 0.5 else rng.randrange(10)
        request = rpc.request
        if request is epb.GetHintRequest:
            return epb.GetHintRequest(view=view(), budget=budget(), seed=seed)
        if request is epb.StreamHintRequest:
            return epb.StreamHintRequest(view=view(), budget=budget(), seed=seed, interval_ms=rng.choice((10, 15, 25)))
        if request is epb.ChooseMoveRequest:
            return epb.ChooseMoveRequest(view=view(), strength=rng.randrange(1, 6), seed=seed,
                                         budget=epb.Budget(iterations=50) if rng.random() < 0.5 else None)
        if request is epb.GetEngineInfoRequest:
            return epb.GetEngineInfoRequest()
        if request is rpb.ListLegalMovesRequest:
            return rpb.ListLegalMovesRequest(view=view())
        if request is rpb.ReplayRecordRequest:
            return rpb.ReplayRecordRequest(record=pb.Record.FromString(rng.choice(self.records)))
        if request is apb.AnalyzeGameRequest:
            return apb.AnalyzeGameRequest(record=pb.Record.FromString(rng.choice(self.short_records)),
                                          iterations=rng.choice((10, 20, 50)), threads=rng.choice((0, 1)), seed=seed)
        if request is health_pb2.HealthCheckRequest:
            return health_pb2.HealthCheckRequest(service=rng.choice(SERVICES))
        if request is REFLECTION_REQUEST:
            kind = rng.randrange(5)
            if kind == 0:
                return REFLECTION_REQUEST(list_services="")
            if kind == 1:
                return REFLECTION_REQUEST(file_by_filename=rng.choice(
                    ["cirulla/v1/game.proto", "cirulla/v1/engine_service.proto", "grpc/health/v1/health.proto",
                     "grpc/reflection/v1/reflection.proto", "nope.proto"]))
            if kind == 2:
                return REFLECTION_REQUEST(file_containing_symbol=rng.choice(
                    ["cirulla.v1.SeatView", "cirulla.v1.EngineService", "cirulla.v1.EngineService.GetHint",
                     "cirulla.v1.Phase", "grpc.reflection.v1.ServerReflection", "no.Such"]))
            if kind == 3:
                return REFLECTION_REQUEST(all_extension_numbers_of_type=rng.choice(
                    ["cirulla.v1.Rules", "google.protobuf.FieldOptions", "no.Such"]))
            return REFLECTION_REQUEST(file_containing_extension=reflection_pb2.ExtensionRequest(
                containing_type=rng.choice(["cirulla.v1.Rules", "google.protobuf.FieldOptions"]),
                extension_number=rng.choice((0, 1, 100, 1000, -1))))
        raise AssertionError(f"no valid request for {rpc.name}")


# --- structural mutations (through the descriptor) ----------------------------------------

def _repeated(f: FieldDescriptor) -> bool:
    return f.is_repeated if hasattr(f, "is_repeated") else f.label == FieldDescriptor.LABEL_REPEATED


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _slot(rng: random.Random, msg: Message) -> tuple[Message, FieldDescriptor | None, str]:
    """A field somewhere in the message (a random descent, set fields preferred)."""
    path = ""
    while True:
        fields = msg.DESCRIPTOR.fields
        if not fields:
            return msg, None, path
        present = [f for f, _ in msg.ListFields()]
        f = rng.choice(present) if present and rng.random() < 0.7 else rng.choice(fields)
        here = _join(path, f.name)
        if f.message_type is not None and rng.random() < 0.6:
            if _repeated(f):
                items = getattr(msg, f.name)
                if items:
                    i = rng.randrange(len(items))
                    msg, path = items[i], f"{here}[{i}]"
                    continue
            elif msg.HasField(f.name):
                msg, path = getattr(msg, f.name), here
                continue
        return msg, f, here


def _huge(rng: random.Random) -> str:
    size = int(10 ** rng.uniform(3, 5.8))
    unit = rng.choice(("X", "7D", "é", "\U0001F0CF", "7D "))
    return (unit * (size // len(unit) + 1))[:size]


def weird(rng: random.Random, f: FieldDescriptor, current: object = None) -> object:
    """A value of the field's type, out of shape for what the field means."""
    t = f.type
    if t == FieldDescriptor.TYPE_STRING:
        if rng.random() < 0.08:
            return _huge(rng)
        if f.name in CARD_FIELDS:
            return rng.choice(BAD_CARDS) if rng.random() < 0.6 else rng.choice(CARDS)
        if f.name == "matta_as":
            return rng.choice(RANK_TEXTS)
        if f.name == "text":
            return rng.choice(MOVE_TEXTS)
        return rng.choice(NAMES)
    if t == FieldDescriptor.TYPE_BYTES:
        return rng.randbytes(rng.randrange(64))
    if t == FieldDescriptor.TYPE_BOOL:
        return not current if isinstance(current, bool) else rng.random() < 0.5
    if t == FieldDescriptor.TYPE_ENUM:
        numbers = [v.number for v in f.enum_type.values]
        return rng.choice([*numbers, max(numbers) + 1, 99, -1, 2**31 - 1, -2**31])
    if t in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return rng.choice(DOUBLES)
    low, high = INT_RANGES[t]
    r = rng.random()
    if r < 0.3:
        return rng.choice(extremes(f))
    if isinstance(current, int) and r < 0.5:                # near the right value: off by a little
        return min(max(current + rng.choice((-2, -1, 1, 2)), low), high)
    if low == 0:
        return rng.choice(UINT64 if high > 2**32 else UINT32)
    return rng.choice(INT64 if high > 2**31 else INT32)


def extremes(f: FieldDescriptor) -> list[int]:
    """The EXTREMES that fit the integer field's type."""
    low, high = INT_RANGES[f.type]
    return [v for v in EXTREMES if low <= v <= high]


def _int_fields(rng: random.Random, msg: Message, path: str = "") -> Iterator[tuple[Message, FieldDescriptor, str]]:
    """The integer fields of the message and of the messages set in it, with their paths."""
    for f in msg.DESCRIPTOR.fields:
        where = _join(path, f.name)
        if f.message_type is not None:
            if f.message_type.GetOptions().map_entry:
                continue
            if _repeated(f):
                items = getattr(msg, f.name)
                for i in sorted(rng.sample(range(len(items)), min(len(items), 16))):   # a blown-up one: a few
                    yield from _int_fields(rng, items[i], f"{where}[{i}]")
            elif msg.HasField(f.name):
                yield from _int_fields(rng, getattr(msg, f.name), where)
        elif f.type in INT_RANGES:
            yield msg, f, where


def set_extreme(rng: random.Random, msg: Message) -> str | None:
    """Set an integer field somewhere in the message to an extreme of its type
    (each field as likely, however deep or often it occurs); what was done, or
    None if the message has no integer field."""
    fields: dict[str, list[tuple[Message, FieldDescriptor, str]]] = {}
    for parent, f, where in _int_fields(rng, msg):
        fields.setdefault(re.sub(r"\[\d+\]", "", where), []).append((parent, f, where))
    if not fields:
        return None
    parent, f, where = rng.choice(rng.choice(list(fields.values())))
    value = rng.choice(extremes(f))
    if _repeated(f):
        items = getattr(parent, f.name)
        i = rng.randrange(len(items)) if items and rng.random() < 0.7 else len(items)
        if i < len(items):
            items[i] = value
        else:
            items.append(value)
        where = f"{where}[{i}]"
    else:
        setattr(parent, f.name, value)
    return f"{where} = {value}"


def _blowup(rng: random.Random) -> int:
    return int(10 ** rng.uniform(2, 4.7))       # 100 .. 50,000


def mutate(rng: random.Random, msg: Message) -> str:
    """Knock one field of the message out of shape; what was done."""
    if rng.random() < EXTREME_SHARE:
        done = set_extreme(rng, msg)
        if done:
            return done
    parent, f, where = _slot(rng, msg)
    if f is None:                       # a message without fields (GetEngineInfoRequest)
        return "nothing to change"
    if _repeated(f):
        items = getattr(parent, f.name)
        op = rng.choice(("append", "replace", "delete", "clear", "blowup", "duplicate", "reverse"))
        if op in ("replace", "delete", "duplicate", "reverse") and not items:
            op = "append"
        if f.message_type is not None:
            if op in ("append", "replace"):
                new = items.add()
                if rng.random() < 0.5 and len(items) > 1:
                    new.CopyFrom(items[rng.randrange(len(items) - 1)])
                    mutate(rng, new)
                if op == "replace" and len(items) > 1:
                    i = rng.randrange(len(items) - 1)
                    items[i].CopyFrom(new)
                    del items[-1]
                    return f"{where}[{i}] replaced"
                return f"{where}: an element appended"
            if op == "blowup":
                n = _blowup(rng)
                if items:
                    model = items[rng.randrange(len(items))]
                    n = min(n, 4_000_000 // max(model.ByteSize(), 1) + 1)     # a few MB at most
                    items.extend([model] * n)
                else:
                    for _ in range(n):
                        items.add()
                return f"{where}: {n} more elements"
        else:
            if op == "append":
                items.append(weird(rng, f))
                return f"{where}: {items[-1]!r:.60} appended"
            if op == "replace":
                i = rng.randrange(len(items))
                items[i] = weird(rng, f, items[i])
                return f"{where}[{i}] = {items[i]!r:.60}"
            if op == "blowup":
                value = weird(rng, f) if not items or rng.random() < 0.5 else items[0]
                if isinstance(value, str) and len(value) > 100:
                    value = value[:100]             # many of a huge string: too much for the client
                n = _blowup(rng)
                items.extend([value] * n)
                return f"{where}: {n} more of {value!r:.40}"
        if op == "delete":
            i = rng.randrange(len(items))
            del items[i]
            return f"{where}[{i}] deleted"
        if op == "clear":
            del items[:]
            return f"{where} cleared"
        if op == "duplicate":
            i = rng.randrange(len(items))
            items.extend([items[i]] * rng.randrange(1, 4))
            return f"{where}[{i}] duplicated"
        reverse = list(items)[::-1]
        del items[:]
        items.extend(reverse)
        return f"{where} reversed"
    if f.message_type is not None:
        if parent.HasField(f.name) and rng.random() < 0.6:
            parent.ClearField(f.name)
            return f"{where} cleared"
        parent.ClearField(f.name)
        getattr(parent, f.name).SetInParent()               # set and empty: a oneof switches to it
        return f"{where} set empty" + (f" (oneof {f.containing_oneof.name})" if f.containing_oneof else "")
    if f.has_presence and parent.HasField(f.name) and rng.random() < 0.25:
        parent.ClearField(f.name)
        return f"{where} unset"
    value = weird(rng, f, getattr(parent, f.name))
    setattr(parent, f.name, value)
    return f"{where} = {value!r:.60}"


# --- wire mutations ------------------------------------------------------------------------

VARINT, I64, LEN, SGROUP, EGROUP, I32 = 0, 1, 2, 3, 4, 5
_WIRE = {FieldDescriptor.TYPE_DOUBLE: I64, FieldDescriptor.TYPE_FIXED64: I64, FieldDescriptor.TYPE_SFIXED64: I64,
         FieldDescriptor.TYPE_FLOAT: I32, FieldDescriptor.TYPE_FIXED32: I32, FieldDescriptor.TYPE_SFIXED32: I32,
         FieldDescriptor.TYPE_STRING: LEN, FieldDescriptor.TYPE_BYTES: LEN, FieldDescriptor.TYPE_MESSAGE: LEN}


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def tag(number: int, wire: int) -> bytes:
    return varint(number << 3 | wire)


def _value(rng: random.Random, wire: int) -> bytes:
    """A well-formed payload of a wire type."""
    if wire == VARINT:
        return varint(rng.choice((1, 2, *EXTREMES)))
    if wire in (I64, I32):
        size = 8 if wire == I64 else 4
        if rng.random() < 0.5:
            return rng.randbytes(size)
        return (rng.choice(EXTREMES) % 2 ** (8 * size)).to_bytes(size, "little")
    data = rng.randbytes(rng.randrange(12))
    return varint(len(data)) + data


def _encoded(f: FieldDescriptor, value: int) -> bytes:
    """An integer field set to the value, as protobuf writes it (a negative int32: ten bytes)."""
    if f.type in (FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SINT64):
        return tag(f.number, VARINT) + varint(2 * value if value >= 0 else -2 * value - 1)     # zigzag
    wire = _WIRE.get(f.type, VARINT)
    if wire == VARINT:
        return tag(f.number, VARINT) + varint(value)
    size = 8 if wire == I64 else 4
    return tag(f.number, wire) + (value % 2 ** (8 * size)).to_bytes(size, "little")


@functools.cache
def _int_paths(descriptor: Descriptor) -> tuple[tuple[tuple[int, ...], str, FieldDescriptor], ...]:
    """Every integer field the message type can hold, at any depth (a message
    type once on a path): the field numbers of the messages on its path, its
    dotted name, the field."""
    def walk(d: Descriptor, numbers: tuple[int, ...], names: str, seen: frozenset[str]):
        for f in d.fields:
            if f.message_type is not None:
                if f.message_type.full_name not in seen and not f.message_type.GetOptions().map_entry:
                    yield from walk(f.message_type, (*numbers, f.number), _join(names, f.name),
                                    seen | {f.message_type.full_name})
            elif f.type in INT_RANGES:
                yield numbers, _join(names, f.name), f
    return tuple(walk(descriptor, (), "", frozenset({descriptor.full_name})))


def _read_varint(data: bytes, i: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        b = data[i]                     # IndexError past the end
        n |= (b & 0x7F) << shift
        i, shift = i + 1, shift + 7
        if b < 0x80:
            return n, i
        if shift > 63:
            raise ValueError("varint too long")


def _fields(data: bytes) -> list[tuple[int, int, int, int, int]]:
    """The top-level fields of a serialized message: number, wire type, where the
    field starts, where its value starts, where it ends. ValueError or IndexError
    if they do not parse (groups are left to the other mutations)."""
    out, i = [], 0
    while i < len(data):
        start = i
        key, i = _read_varint(data, i)
        number, wire = key >> 3, key & 7
        value_start = i
        if wire == VARINT:
            _, i = _read_varint(data, i)
        elif wire in (I64, I32):
            i += 8 if wire == I64 else 4
        elif wire == LEN:
            length, value_start = _read_varint(data, i)
            i = value_start + length
        else:
            raise ValueError(f"wire type {wire}")
        if i > len(data):
            raise ValueError("past the end")
        out.append((number, wire, start, value_start, i))
    return out


def _merge_into(rng: random.Random, data: bytes, numbers: tuple[int, ...], fields: bytes) -> bytes | None:
    """The serialized message with `fields` merged into one of the messages at
    the end of the path that it already holds (one at random: e.g. a deal of the
    history, not a new event), or None if it holds none."""
    if not numbers:
        return data + fields            # of a field given twice, the last counts
    try:
        spans = [(start, value_start, end) for number, wire, start, value_start, end in _fields(data)
                 if number == numbers[0] and wire == LEN]
    except (ValueError, IndexError):
        return None
    rng.shuffle(spans)
    for start, value_start, end in spans:
        inner = _merge_into(rng, data[value_start:end], numbers[1:], fields)
        if inner is not None:
            return data[:start] + tag(numbers[0], LEN) + varint(len(inner)) + inner + data[end:]
    return None


def _path(rng: random.Random, cls: type[Message]) -> tuple[list[int], list[str], object]:
    """A path of message fields from the top (0 to 3 deep), and the message type at its end."""
    numbers: list[int] = []
    names: list[str] = []
    descriptor = cls.DESCRIPTOR
    while rng.random() < 0.6:
        nested = [f for f in descriptor.fields if f.message_type is not None]
        if not nested:
            break
        f = rng.choice(nested)
        numbers.append(f.number)
        names.append(f.name)
        descriptor = f.message_type
    return numbers, names, descriptor


def _wrap(numbers: list[int], inner: bytes) -> bytes:
    """Fields for the message at the end of a path, as bytes to append at the top
    (a message's serializations concatenated merge into one)."""
    for number in reversed(numbers):
        inner = tag(number, LEN) + varint(len(inner)) + inner
    return inner


def wire_extreme(rng: random.Random, data: bytes, cls: type[Message]) -> tuple[bytes, str]:
    """An integer field the request can hold (each as likely, however deep) set
    on the wire to an extreme of its type: most often in a message already there
    (a deal of the history), else in new ones; what was done."""
    numbers, name, f = rng.choice(_int_paths(cls.DESCRIPTOR))
    value = rng.choice(extremes(f))
    fields = _encoded(f, value)
    merged = _merge_into(rng, data, numbers, fields) if rng.random() < 0.8 else None
    if merged is not None:
        return merged, f"{name} = {value} on the wire"
    return data + _wrap(list(numbers), fields), f"{name} = {value} on the wire, in new messages"


def wire_mutation(rng: random.Random, data: bytes, cls: type[Message]) -> tuple[bytes, str]:
    """The serialized request knocked out of shape on the wire; what was done."""
    op = rng.choice(("truncate", "truncate", "flip", "splice", "cut", "wrong_wire_type", "wrong_wire_type",
                     "not_utf8", "deep_groups", "length_past_end", "long_varint", "bad_tag", "unknown_fields",
                     "extreme", "extreme"))
    if op == "extreme" and _int_paths(cls.DESCRIPTOR):
        return wire_extreme(rng, data, cls)
    if op == "truncate" and data:
        k = rng.randrange(len(data))
        return data[:k], f"truncated to {k} of {len(data)} bytes"
    if op == "flip" and data:
        out = bytearray(data)
        n = rng.randrange(1, 6)
        for _ in range(n):
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
        return bytes(out), f"{n} bit(s) flipped"
    if op == "splice":
        k = rng.randrange(len(data) + 1)
        junk = rng.randbytes(rng.randrange(1, 32))
        return data[:k] + junk + data[k:], f"{len(junk)} random bytes at {k}"
    if op == "cut" and data:
        a = rng.randrange(len(data))
        b = min(len(data), a + rng.randrange(1, 40))
        return data[:a] + data[b:], f"bytes {a}..{b} cut out"
    numbers, names, descriptor = _path(rng, cls)
    where = ".".join(names) or "the request"
    fields = list(descriptor.fields)
    if op == "wrong_wire_type" and fields:
        f = rng.choice(fields)
        right = _WIRE.get(f.type, VARINT)
        wrong = rng.choice([w for w in (VARINT, I64, LEN, I32) if w != right])
        return data + _wrap(numbers, tag(f.number, wrong) + _value(rng, wrong)), \
            f"{_join('.'.join(names), f.name)} with wire type {wrong} (not {right})"
    strings = [f for f in fields if f.type == FieldDescriptor.TYPE_STRING]
    if op == "not_utf8" and strings:
        f = rng.choice(strings)
        bad = rng.choice((b"\xff", b"\xc3", b"\xed\xa0\x80", b"7\xe2\x99", b"\xc0\xaf", b"AD\x80"))
        return data + _wrap(numbers, tag(f.number, LEN) + varint(len(bad)) + bad), \
            f"{_join('.'.join(names), f.name)} = {bad!r} (not UTF-8)"
    if op == "deep_groups":
        depth = int(10 ** rng.uniform(1.5, 4))
        number = rng.choice((999, 1 << 20, 7))
        closed = rng.random() < 0.7
        groups = tag(number, SGROUP) * depth + (tag(number, EGROUP) * depth if closed else b"")
        return data + _wrap(numbers, groups), f"{depth} nested groups in {where}" + ("" if closed else ", unclosed")
    if op == "length_past_end":
        number = rng.choice(fields).number if fields else 1
        length = rng.choice((5, 1000, 2**31 - 1, 2**32, 2**63))
        return data + _wrap(numbers, tag(number, LEN) + varint(length) + b"ab"), \
            f"a length of {length} with 2 bytes left, in {where}"
    if op == "long_varint":
        number = rng.choice(fields).number if fields else 1
        return data + _wrap(numbers, tag(number, VARINT) + b"\xff" * rng.randrange(10, 16) + b"\x01"), \
            f"an overlong varint in {where}"
    if op == "bad_tag":
        bad = rng.choice((b"\x00", b"\x07", b"\x0e", tag(0, LEN), tag(2**29, VARINT), b"\xff\xff\xff\xff\xff\x0f",
                          tag(1, EGROUP), tag(5, 6), tag(5, 7)))
        return data + _wrap(numbers, bad + b"\x01"), f"invalid tag {bad.hex()} in {where}"
    unknown = b"".join(tag(rng.choice((100, 5000, 2**29 - 1)), w) + _value(rng, w)
                       for w in rng.choices((VARINT, I64, LEN, I32), k=rng.randrange(1, 6)))
    return data + _wrap(numbers, unknown), f"unknown fields in {where}"


# --- sending and judging ------------------------------------------------------------------------

class ServerCosts:
    """What the server process has spent so far, read from /proc (Linux): its CPU
    time (user and system, all its threads) and its peak resident memory; None
    where they cannot be read (a server not started here, not Linux)."""

    def __init__(self, pid: int | None = None):
        self.pid = pid

    def cpu_seconds(self) -> float | None:
        if self.pid is None:
            return None
        try:
            with open(f"/proc/{self.pid}/stat") as f:
                after_name = f.read().rpartition(")")[2].split()    # the name in parentheses may hold spaces
        except OSError:
            return None
        utime, stime = int(after_name[11]), int(after_name[12])     # the 14th and 15th fields, in clock ticks
        return (utime + stime) / os.sysconf("SC_CLK_TCK")

    def peak_rss_mib(self) -> float | None:
        return None if self.pid is None else rss_mib(self.pid, "VmHWM")

    def busy(self, over: float = 0.5) -> bool:
        """Whether the server still works (more than a tenth of a core over `over`
        seconds), or cannot be told idle (its CPU is not known)."""
        before = self.cpu_seconds()
        if before is None:
            return True
        time.sleep(over)
        after = self.cpu_seconds()
        return after is None or after - before > over / 10


@dataclass
class Outcome:
    code: str                       # the status code's name; a Watch we closed after its first answer: OK
    details: str = ""
    violations: list[tuple[str, str]] = field(default_factory=list)
    responses: list[bytes] = field(default_factory=list)
    seconds: float = 0.0            # the call's wall time
    cpu_seconds: float | None = None    # the server's CPU time while the call was in flight (None: not known)
    deadline: float = math.inf      # the call's, in seconds

    @property
    def timed_out(self) -> bool:
        """No answer within the call's deadline (the server never says DEADLINE_EXCEEDED itself)."""
        return self.code == "DEADLINE_EXCEEDED" and self.seconds >= self.deadline

    @property
    def cost(self) -> float:
        """What judges a request slow: the server's CPU over the call; its wall time where that is not known."""
        return self.seconds if self.cpu_seconds is None else self.cpu_seconds

    def over(self, bound: float) -> bool:
        return self.timed_out or self.cost > bound

    def describe(self) -> str:
        cpu = "" if self.cpu_seconds is None else f" ({self.cpu_seconds * 1000:.0f} ms of the server's CPU)"
        text = f"{self.code} after {self.seconds * 1000:.0f} ms{cpu}: {self.details[:300]!r}"
        if self.violations:
            text += "; violations " + ", ".join(f"{f!r}: {d[:80]!r}" for f, d in self.violations[:5])
        return text


def _identity(b: bytes) -> bytes:
    return b


def send(channel: grpc.Channel, case: Case, timeout: float = DEADLINE_SECONDS,
         server: ServerCosts | None = None) -> Outcome:
    """Send the case's request; how the server answered, how long it took and
    the server's CPU meanwhile (exactly the request's own when it is the only
    one in flight)."""
    server = server or ServerCosts()
    cpu_before = server.cpu_seconds()
    start = time.perf_counter()
    outcome = _call(channel, case, timeout)
    outcome.seconds = time.perf_counter() - start
    cpu_after = server.cpu_seconds()
    if cpu_before is not None and cpu_after is not None:
        outcome.cpu_seconds = cpu_after - cpu_before
    outcome.deadline = timeout
    return outcome


def _call(channel: grpc.Channel, case: Case, timeout: float) -> Outcome:
    responses: list[bytes] = []
    try:
        if case.rpc.shape == "unary":
            call = channel.unary_unary(case.method, request_serializer=_identity, response_deserializer=_identity)
            responses.append(call(case.messages[0], timeout=timeout))
        elif case.rpc.shape == "server_stream":
            call = channel.unary_stream(case.method, request_serializer=_identity, response_deserializer=_identity)
            responses.extend(call(case.messages[0], timeout=timeout))
        elif case.rpc.shape == "watch":
            call = channel.unary_stream(case.method, request_serializer=_identity, response_deserializer=_identity)
            stream = call(case.messages[0], timeout=timeout)
            try:
                responses.append(next(stream))          # its first answer: the status now
            except StopIteration:
                pass
            finally:
                stream.cancel()                         # and closed
        else:
            call = channel.stream_stream(case.method, request_serializer=_identity, response_deserializer=_identity)
            responses.extend(call(iter(case.messages), timeout=timeout))
    except grpc.RpcError as e:
        code = e.code()
        return Outcome(code.name if code else "None", e.details() or "", field_violations(e), responses)
    return Outcome("OK", "", [], responses)


def _decodes(cls: type[Message], data: bytes) -> bool:
    try:
        cls.FromString(data)
        return True
    except DecodeError:
        return False


def judge(case: Case, outcome: Outcome) -> list[str]:
    """What is wrong with the answer to a case (nothing: an empty list)."""
    rpc, code = case.rpc, outcome.code
    problems = []
    if outcome.timed_out:
        problems.append(f"no answer within {outcome.deadline:g} s (the call's deadline)")
    elif outcome.over(rpc.slow_bound):
        spent = "of the server's CPU" if outcome.cpu_seconds is not None else "(the server's CPU not known)"
        problems.append(f"slow: {outcome.cost:.2f} s {spent}, more than the {rpc.slow_bound:g} s "
                        f"{rpc.name} may cost")
    if code not in rpc.codes and not outcome.timed_out:
        problems.append(f"status {code}, not one {rpc.name} documents ({', '.join(sorted(rpc.codes))})")
    if code == "INVALID_ARGUMENT":
        names = {f.name for f in rpc.request.DESCRIPTOR.fields}
        if not outcome.violations:
            problems.append("INVALID_ARGUMENT without field violations")
        for f, description in outcome.violations:
            root = re.split(r"[.\[]", f, maxsplit=1)[0]
            if not f:
                problems.append(f"a violation without a field: {description!r}")
            elif root == "request":
                if all(_decodes(rpc.request, m) for m in case.messages):
                    problems.append(f"decodable bytes refused as undecodable: {description!r}")
            elif root not in names:
                problems.append(f"a violation of {f!r}, not a field of {rpc.request.DESCRIPTOR.name}")
            if not description:
                problems.append(f"a violation of {f!r} without a description")
    elif code == "RESOURCE_EXHAUSTED":
        if not CAPS.search(outcome.details):
            problems.append(f"RESOURCE_EXHAUSTED that no documented cap explains: {outcome.details!r}")
    elif code == "OK" and rpc.response is not None:
        if not all(_decodes(rpc.response, r) for r in outcome.responses):
            problems.append("an answer that does not decode")
        if rpc.shape == "watch" and not outcome.responses:
            problems.append("Watch ended without telling the status")
        if rpc.response is epb.StreamHintResponse and \
                (not outcome.responses or not epb.StreamHintResponse.FromString(outcome.responses[-1]).final):
            problems.append("StreamHint ended without its final answer")
    return problems


# --- a run -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Cost:
    """A request's wall time and the server's CPU time meanwhile, and which request it was."""
    seconds: float
    cpu_seconds: float | None
    case: str                       # seed S case I (RPC)

    def describe(self) -> str:
        cpu = "CPU not known" if self.cpu_seconds is None else f"{self.cpu_seconds * 1000:.0f} ms of CPU"
        return f"{self.case}: {self.seconds * 1000:.0f} ms, {cpu}"


@dataclass
class Tally:
    """The status counts per RPC, the defects with their cases, what the
    requests cost the server (`server`: its CPU and memory, where known)."""
    server: ServerCosts = field(default_factory=ServerCosts)
    counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    defects: list[tuple[Case, Outcome, list[str]]] = field(default_factory=list)
    requests: int = 0
    slowest: Cost | None = None     # the longest call
    costliest: Cost | None = None   # the one the server spent the most CPU on
    over_bound: int = 0             # requests slow or not answered within their deadline
    peak_rss_mib: float | None = None
    stopped: str = ""               # why the run stopped before its last case
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, case: Case, outcome: Outcome) -> list[str]:
        problems = judge(case, outcome)
        label = f"seed {case.seed} case {case.index} ({case.rpc.name})"
        cost = Cost(outcome.seconds, outcome.cpu_seconds, label)
        rss = self.server.peak_rss_mib()
        with self._lock:
            if rss is not None:
                if rss > SERVER_RSS_BOUND_MIB >= (self.peak_rss_mib or 0):      # the request that crossed it
                    problems.append(f"memory: the server's peak RSS reached {rss:.0f} MiB (bound "
                                    f"{SERVER_RSS_BOUND_MIB} MiB)")
                self.peak_rss_mib = max(rss, self.peak_rss_mib or 0)
            self.requests += 1
            self.counts[case.rpc.name, outcome.code] += 1
            if problems:
                self.defects.append((case, outcome, problems))
            if outcome.over(case.rpc.slow_bound):
                self.over_bound += 1
            if self.slowest is None or cost.seconds > self.slowest.seconds:
                self.slowest = cost
            if cost.cpu_seconds is not None and \
                    (self.costliest is None or cost.cpu_seconds > (self.costliest.cpu_seconds or 0)):
                self.costliest = cost
        # a request the server still works on past its deadline: it would slow the next ones and
        # be billed to them, and a few more would take the server down: no more requests
        if outcome.timed_out and not self.stopped and self.server.busy():
            self.stopped = f"stopped after {label}: the server still works on it past its deadline"
        return problems

    def report(self, defect: tuple[Case, Outcome, list[str]]) -> str:
        case, outcome, problems = defect
        return "; ".join(problems) + f"\n  answer: {outcome.describe()}\n" + case.describe()

    def costs(self) -> str:
        """The slowest request, the costliest, how many went over the bound: one line."""
        slowest = self.slowest.describe() if self.slowest else "none"
        costliest = self.costliest.describe() if self.costliest else "not known"
        return (f"slowest: {slowest}; most CPU: {costliest}; {self.over_bound} over the bound "
                f"({SLOW_SECONDS:g} s, AnalyzeGame {SLOW_SECONDS + ANALYSIS_SECONDS:g} s)")


def run(channel: grpc.Channel, generator: Generator, indices: Iterable[int], tally: Tally, *,
        timeout: float = DEADLINE_SECONDS, stop: Callable[[], bool] = lambda: False) -> None:
    """Send the cases of these indices one after the other, adding each answer
    to the tally (the server's CPU over each call is that call's own), until the
    tally stops the run."""
    for case in generator.cases(indices):
        if stop() or tally.stopped:
            return
        tally.add(case, send(channel, case, timeout, tally.server))


LOG_DEFECTS = re.compile(r"Traceback|\bERROR\b|\bCRITICAL\b|grpcio did not report")


def log_defects(lines: Iterable[str]) -> list[str]:
    """The server's log lines that tell of a failure (an INTERNAL's traceback, grpcio's errors)."""
    return [line.rstrip() for line in lines if LOG_DEFECTS.search(line)]


def rss_mib(pid: int, which: str = "VmRSS") -> float | None:
    """A process's resident memory in MiB (Linux; VmHWM: its peak), or None."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(f"{which}:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def sigterm(proc, within: float = STOP_WITHIN) -> tuple[int | None, float]:
    """SIGTERM a server process; its exit status (None: still running after
    `within` seconds, then killed) and the seconds it took."""
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        status = proc.wait(within)
    except Exception:                   # noqa: BLE001 - subprocess.TimeoutExpired
        proc.kill()
        proc.wait(10)
        return None, time.monotonic() - start
    return status, time.monotonic() - start
