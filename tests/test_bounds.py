"""Every number from outside bounded before it drives any work.

The ranges are in the schema (proto/cirulla/v1/bounds.proto, one option on
each integer field); cirulla.solver.bounds checks them at every door: the
service's RPCs (gRPC and `cirulla engine`), and the files the command line
reads. Here: every integer a client can send has a range, the ranges are the
game's own sizes, the request that once pinned a server (a deal of round
2^30 in a view's history: the replay counted the cards dealt up to it, a
billion steps) is refused at once on every path, and a sweep of every integer
field of every request, one at a time, to each extreme, is answered at a
bounded cost of the server's CPU.
"""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest
from fuzz import malformed
from google.protobuf import json_format
from google.protobuf.message import Message
from test_engine_mode import Engine, as_dict, failure_of
from test_server_process import Process

from cirulla.cli.habits import parse_analysis
from cirulla.solver import Rules, record
from cirulla.solver.bounds import INTEGER_TYPES, is_repeated, out_of_bounds, range_of
from cirulla.solver.errors import RecordError, ViewError
from cirulla.solver.events import Deal
from cirulla.solver.rules import PRESETS
from cirulla.solver.view import stock_after
from cirulla.solver.view_builder import build_view
from cirulla.v1 import analysis_service_pb2 as apb
from cirulla.v1 import analysis_service_pb2_grpc, engine_service_pb2_grpc, rules_service_pb2_grpc
from cirulla.v1 import embedded_engine_pb2 as xpb
from cirulla.v1 import engine_service_pb2 as epb
from cirulla.v1 import game_pb2 as pb
from cirulla.v1 import puzzle_pb2 as zpb
from cirulla.v1 import rules_service_pb2 as rpb
from server_support import choice_position, failure, position, running, stubs, view_msg

HUGE_ROUND = 2**30
# the extremes of a signed integer field (those that fit its type)
EXTREMES = (0, -1, 2**30, 2**31 - 1, -(2**31), 2**63 - 1)
UNSIGNED_EXTREMES = (0, 2**31 - 1, 2**32 - 1, 2**63 - 1, 2**64 - 1)
_FITS = {32: (-(2**31), 2**31 - 1), 64: (-(2**63), 2**63 - 1)}


# --- the schema ------------------------------------------------------------------------

def _services():
    from cirulla.v1 import analysis_service_pb2, engine_service_pb2, rules_service_pb2
    for module in (engine_service_pb2, rules_service_pb2, analysis_service_pb2):
        yield from module.DESCRIPTOR.services_by_name.values()


# what comes in from outside: every RPC's request, the engine's query, the files the CLI reads, the puzzles an
# app reads (convert.puzzle_from_proto)
INBOUND = [m.input_type for s in _services() for m in s.methods] + [
    xpb.EngineQuery.DESCRIPTOR, pb.Record.DESCRIPTOR, pb.SeatView.DESCRIPTOR,
    apb.GameAnalysisLine.DESCRIPTOR, apb.GameAnalysis.DESCRIPTOR, zpb.Puzzle.DESCRIPTOR]


def integer_fields(roots) -> dict[str, object]:
    """Every integer field reachable from these message types, by full name."""
    found, seen, todo = {}, set(), list(roots)
    while todo:
        d = todo.pop()
        if d.full_name in seen:
            continue
        seen.add(d.full_name)
        for f in d.fields:
            if f.type in INTEGER_TYPES:
                found[f.full_name] = f
            elif f.message_type is not None:
                todo.append(f.message_type)
    return found


def test_every_integer_a_client_sends_has_a_range():
    fields = integer_fields(INBOUND)
    assert len(fields) > 60
    unbounded = sorted(name for name, f in fields.items() if range_of(f) is None and f.name != "seed")
    assert not unbounded, f"integer fields without (bounds) in the schema: {unbounded}"
    for name, f in fields.items():
        if f.name == "seed":
            assert range_of(f) is None and f.type == f.TYPE_UINT64, f"{name}: every value is a seed"
        else:
            lo, hi = range_of(f)
            assert lo <= hi, name


def test_the_ranges_are_the_games_sizes():
    every = [r for p in PRESETS for n in (2, 3, 4, 5) for r in _rules(p, n)]
    rounds = max(next(k for k in range(40) if stock_after(r, k) < 0) for r in every)
    cards = max(r.round_cards(k) for r in every for k in range(rounds) if stock_after(r, k) >= 0)
    bounds = {name: range_of(f) for name, f in integer_fields(INBOUND).items()}
    assert bounds["cirulla.v1.SeatView.round"] == bounds["cirulla.v1.Deal.round"] == (0, rounds - 1)
    assert bounds["cirulla.v1.SeatView.hand_sizes"] == (0, cards)
    assert bounds["cirulla.v1.SeatView.stock_size"] == (0, 40 - min(r.table_cards for r in every))
    most = max(r.players for r in every)
    assert bounds["cirulla.v1.Rules.players"] == (0, most)
    for name in ("SeatView.seat", "SeatView.dealer", "SeatView.to_move", "Turn.seat", "Deal.dealer",
                 "Record.first_dealer", "SideScore.side"):
        assert bounds[f"cirulla.v1.{name}"] == (0, most - 1), name


def _rules(preset: str, players: int) -> list[Rules]:
    try:
        return [Rules.preset(preset, players=players)]
    except ValueError:
        return []


def test_out_of_bounds_names_every_number_outside_its_range():
    view = pb.SeatView(seat=7, scores=[3, -1], history=[
        pb.Event(turn=pb.Turn(seat=1)), pb.Event(deal=pb.Deal(round=HUGE_ROUND, dealer=-5))])
    assert out_of_bounds(view, "view") == [
        ("view.seat", "7 is out of range 0..4"), ("view.scores[1]", "-1 is out of range 0..1000000"),
        ("view.history[1].deal.round", f"{HUGE_ROUND} is out of range 0..5"),
        ("view.history[1].deal.dealer", "-5 is out of range 0..4")]
    # 0 is a field left out (proto3), accepted where the range starts higher
    assert out_of_bounds(epb.StreamHintRequest(interval_ms=0)) == []
    assert out_of_bounds(epb.StreamHintRequest(interval_ms=5)) == [("interval_ms", "5 is out of range 10..60000")]
    assert out_of_bounds(epb.GetHintRequest(seed=2**64 - 1)) == []


# --- the request that pinned a server ---------------------------------------------------

def _view_with_deal_round(round_: int) -> tuple[pb.SeatView, int]:
    """A view in a hand's third round, its whole history given (the hand's
    first deal too: so it is replayed), the last deal's round set to `round_`
    (the seat's own cards in it: so the replay compares them with the cards
    dealt in that round)."""
    view = view_msg(position(1, 12))
    k = max(i for i, e in enumerate(view.history) if e.WhichOneof("kind") == "deal")
    assert k > 0 and view.history[k].deal.hands[view.seat].cards
    view.history[k].deal.round = round_
    return view, k


def test_a_deal_past_the_hands_rounds_is_refused_at_once_over_grpc():
    view, k = _view_with_deal_round(HUGE_ROUND)
    field = f"view.history[{k}].deal.round"
    with running() as server:
        s = stubs(server)
        for call, request in ((s.engine.GetHint, epb.GetHintRequest(view=view, budget=epb.Budget(iterations=100))),
                              (s.rules.ListLegalMoves, rpb.ListLegalMovesRequest(view=view))):
            code, violations, _ = failure(call, request, timeout=30)
            assert code is grpc.StatusCode.INVALID_ARGUMENT and violations[0][0] == field, violations
        stream = s.engine.StreamHint(epb.StreamHintRequest(view=view, budget=epb.Budget(iterations=100)), timeout=30)
        with pytest.raises(grpc.RpcError) as raised:
            list(stream)
        assert raised.value.code() is grpc.StatusCode.INVALID_ARGUMENT and field in raised.value.details()


def test_a_deal_past_the_hands_rounds_is_refused_by_the_engine(tmp_path):
    view, k = _view_with_deal_round(HUGE_ROUND)
    engine = Engine(tmp_path)
    try:
        engine.send({"id": "h", "getHint": {"view": as_dict(view), "budget": {"iterations": 100}}})
        engine.send({"id": "l", "listLegalMoves": {"view": as_dict(view)}})
        for query_id in ("h", "l"):
            code, fields = failure_of(engine.next(query_id))
            assert (code, fields) == ("INVALID_ARGUMENT", [f"view.history[{k}].deal.round"])
        assert engine.close() == 0
    finally:
        engine.kill()


def test_a_deal_past_the_hands_rounds_is_refused_by_the_python_api():
    match = position(1, 12)
    view = match.view(match.to_move)
    deal = max(i for i, e in enumerate(view.history) if isinstance(e, Deal))
    history = list(view.history)
    history[deal] = dataclasses.replace(history[deal], round=HUGE_ROUND)
    started = time.process_time()
    with pytest.raises(ViewError) as raised:
        build_view(view.rules, seat=view.seat, dealer=view.dealer, hand=view.hand, table=view.table,
                   history=history)
    assert raised.value.violations[0].field == f"history[{deal}].deal.round"
    assert time.process_time() - started < 5          # a hang, not a speed, is what this catches


def test_the_command_lines_files_are_bounded_too(tmp_path):
    view, k = _view_with_deal_round(HUGE_ROUND)
    path = tmp_path / "view.json"
    path.write_text(json_format.MessageToJson(view))
    done = subprocess.run([sys.executable, "-m", "cirulla.cli.main", "hint", "--view", str(path), "--json"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    failure_line = json_format.Parse(done.stdout, xpb.Failure())
    assert done.returncode == 3 and [v.field for v in failure_line.field_violations] == \
        [f"view.history[{k}].deal.round"], done.stderr
    match = choice_position()
    data = json.loads(record.dumps(match))
    data["events"][0]["deal"]["round"] = HUGE_ROUND
    with pytest.raises(RecordError) as raised:
        record.loads(json.dumps(data))
    assert raised.value.field == "events[0].deal.round"
    analysis = {"analysis": {"decisions": [{"number": 1, "hand": 2**31 - 1}], "summary": {"players": [{}]}}}
    with pytest.raises(ValueError, match=r"analysis\.decisions\[0\]\.hand: 2147483647 is out of range"):
        parse_analysis(json.dumps(analysis), "x.jsonl", 0)


# --- the sweep: every integer field of every request, one at a time, to each extreme -----

def _extremes(field) -> tuple[int, ...]:
    if field.type in (field.TYPE_UINT32, field.TYPE_UINT64, field.TYPE_FIXED32, field.TYPE_FIXED64):
        top = 2**32 - 1 if field.type in (field.TYPE_UINT32, field.TYPE_FIXED32) else 2**64 - 1
        return tuple(v for v in UNSIGNED_EXTREMES if v <= top)
    wide = 64 if field.type in (field.TYPE_INT64, field.TYPE_SINT64, field.TYPE_SFIXED64) else 32
    lo, hi = _FITS[wide]
    return tuple(v for v in EXTREMES if lo <= v <= hi)


def _slots(request: Message) -> Iterator[tuple[str, list, object]]:
    """(full name, path, field) of every integer field reachable from the request's
    type, each once, on the first path to it through the base request: a
    repeated message's first element (added if there is none), a oneof's
    member set."""
    seen: set[str] = set()
    todo = [([], request.DESCRIPTOR)]
    while todo:
        path, d = todo.pop(0)
        for f in d.fields:
            if f.type in INTEGER_TYPES and f.full_name not in seen:
                seen.add(f.full_name)
                yield f.full_name, path + [f], f
            elif f.message_type is not None and f.message_type.full_name not in {x.full_name for x in path}:
                todo.append((path + [f], f.message_type))


def _set(request: Message, path: list, value: int) -> Message:
    msg = type(request)()
    msg.CopyFrom(request)
    at = msg
    for f in path[:-1]:
        if is_repeated(f):
            items = getattr(at, f.name)
            at = items[0] if len(items) else items.add()
        else:
            at = getattr(at, f.name)
    last = path[-1]
    if is_repeated(last):
        items = getattr(at, last.name)
        if len(items):
            items[0] = value
        else:
            items.append(value)
    else:
        setattr(at, last.name, value)
    return msg


@pytest.fixture(scope="module")
def fuzzing_server():
    """A server of the fuzzing's flags: short searches, small caps."""
    p = Process(*malformed.SERVER_FLAGS)
    yield p
    p.stop()


def _bases() -> list[tuple[str, Message]]:
    view = view_msg(choice_position())
    budget = epb.Budget(iterations=50)
    records = malformed.base_records()
    whole = records[0]                  # a whole hand, hand_end and its scores included
    short = next(r for r in records if len(r.events) <= 13)     # analysed at a small cost
    return [("EngineService/GetHint", epb.GetHintRequest(view=view, budget=budget, seed=1)),
            ("EngineService/StreamHint", epb.StreamHintRequest(view=view, budget=budget, seed=1, interval_ms=20)),
            ("EngineService/ChooseMove", epb.ChooseMoveRequest(view=view, strength=epb.STRENGTH_FULL, budget=budget)),
            ("RulesService/ListLegalMoves", rpb.ListLegalMovesRequest(view=view)),
            ("RulesService/ReplayRecord", rpb.ReplayRecordRequest(record=whole)),
            ("AnalysisService/AnalyzeGame", apb.AnalyzeGameRequest(record=short, iterations=10, threads=1))]


def _call(server, rpc: str, request: Message) -> str:
    service, method = rpc.split("/")
    stub = {"EngineService": engine_service_pb2_grpc.EngineServiceStub,
            "RulesService": rules_service_pb2_grpc.RulesServiceStub,
            "AnalysisService": analysis_service_pb2_grpc.AnalysisServiceStub}[service](server.channel)
    try:
        answer = getattr(stub, method)(request, timeout=60)
        if malformed.RPC[rpc].shape == "server_stream":
            list(answer)
        return "OK"
    except grpc.RpcError as e:
        return e.code().name


def test_every_integer_of_every_request_at_each_extreme_is_answered_cheaply(fuzzing_server):
    server = fuzzing_server
    cases = [(rpc, name, value, _set(request, path, value))
             for rpc, request in _bases() for name, path, field in _slots(request) for value in _extremes(field)]
    swept = {name for _, name, _, _ in cases}
    assert integer_fields([m.input_type for s in _services() for m in s.methods]).keys() <= swept
    costs = malformed.ServerCosts(server.proc.pid)
    cpu = costs.cpu_seconds()
    with ThreadPoolExecutor(4) as pool:
        codes = list(pool.map(lambda c: _call(server, c[0], c[3]), cases))
    spent = costs.cpu_seconds() - cpu
    wrong = [(rpc, name, value, code) for (rpc, name, value, _), code in zip(cases, codes, strict=True)
             if code not in malformed.RPC[rpc].codes]
    assert not wrong, f"answers outside the RPCs' documented codes: {wrong[:10]}"
    assert codes.count("INVALID_ARGUMENT") > len(cases) // 2 and "OK" in codes
    # each request's budget allows at most 0.1 s: a request that pins the server costs minutes
    assert spent < 0.1 * len(cases) + 30, f"{len(cases)} requests cost the server {spent:.1f} s of CPU"
    print(f"\n{len(cases)} requests, {len(swept)} fields: the server's CPU {spent:.2f} s")
