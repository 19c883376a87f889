"""`cirulla engine`: the JSON-lines engine driven as a child process, the way an
app embeds it: answers matched to queries by id, hints equal to the gRPC
service's, interim reports, terminate, bad lines, end of input, SIGINT and a
streamed analysis."""
from __future__ import annotations

import argparse
import json
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import pytest
from google.protobuf import json_format
from test_batch import runs_out_of_order

from cirulla.server.config import ServerConfig
from cirulla.server.service import Service
from cirulla.solver import Match, Rules, analysis, record
from cirulla.solver.players import GreedyPlayer
from cirulla.v1 import engine_service_pb2 as epb
from cirulla.v1 import rules_service_pb2 as rpb
from cirulla.v1.embedded_engine_pb2 import EngineAnswer
from server_support import Call, choice_position, position, view_msg

ANSWER_S = 20.0                 # the longest wait for any answer before the test fails


def command() -> list[str]:
    """`cirulla engine`, through the `cirulla` command once it registers the
    subcommand, else through the module's own entry point."""
    from cirulla.cli.main import build_parser
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    if "engine" in sub.choices:
        return [sys.executable, "-m", "cirulla.cli.main", "engine"]
    return [sys.executable, "-c", "import sys; from cirulla.cli.engine import main; sys.exit(main())"]


class Engine:
    """A running `cirulla engine`: queries written to its stdin, its answers read
    by a thread and handed out by query id (a hang fails the test, not hangs it)."""

    def __init__(self, tmp_path: Path, *flags: str, launcher: list[str] | None = None):
        self.log = tmp_path / f"engine-{time.monotonic_ns()}.log"
        with open(self.log, "wb") as err:
            self.proc = subprocess.Popen([*(launcher or command()), *flags], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=err)
        self._lines: queue.Queue = queue.Queue()
        self._pending: dict[str, list[dict]] = defaultdict(list)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def send(self, query) -> None:
        line = query if isinstance(query, str) else json.dumps(query)
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def next(self, query_id: str, timeout: float = ANSWER_S) -> dict:
        """The next answer to this query (answers to others are kept for later)."""
        deadline = time.monotonic() + timeout
        while not self._pending[query_id]:
            try:
                line = self._lines.get(timeout=max(deadline - time.monotonic(), 0))
            except queue.Empty:
                pytest.fail(f"no answer to {query_id!r} within {timeout} s; log:\n{self.log.read_text()}")
            if line is None:
                pytest.fail(f"the engine closed its output; log:\n{self.log.read_text()}")
            assert line.endswith(b"\n") and line.count(b"\n") == 1
            answer = json.loads(line)               # every line is one JSON object
            json_format.ParseDict(answer, EngineAnswer())   # ... and an EngineAnswer
            self._pending[answer["id"]].append(answer)     # every answer has its id key, "" too
        return self._pending[query_id].pop(0)

    def answers(self, query_id: str, timeout: float = ANSWER_S) -> list[dict]:
        """Every answer to this query, up to its final one."""
        out = [self.next(query_id, timeout)]
        while not out[-1].get("final"):
            out.append(self.next(query_id, timeout))
        return out

    def final(self, query_id: str, timeout: float = ANSWER_S) -> dict:
        return self.answers(query_id, timeout)[-1]

    def close(self, timeout: float = ANSWER_S) -> int:
        self.proc.stdin.close()
        return self.proc.wait(timeout)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    e = Engine(tmp_path_factory.mktemp("engine"), "--max-concurrent-searches", "2")
    yield e
    try:
        assert e.close() == 0
    finally:
        e.kill()


@pytest.fixture
def fresh(tmp_path):
    """An engine of the test's own (for the end of input and signals)."""
    started = []

    def start(*flags, **options):
        started.append(Engine(tmp_path, *flags, **options))
        return started[-1]
    yield start
    for e in started:
        e.kill()


def as_dict(message) -> dict:
    return json_format.MessageToDict(message)


def hint_query(query_id: str, match: Match, *, seed: int = 0, interval_ms: int = 0, **budget) -> dict:
    """A getHint query; a time budget is searched to its end (`exhaust`), not
    stopped once settled: the tests time reports, terminations and stops by it."""
    if "timeMs" in budget or "time_ms" in budget:
        budget = {"exhaust": True, **budget}
    query = {"id": query_id, "getHint": {"view": as_dict(view_msg(match)), "budget": budget, "seed": str(seed)}}
    if interval_ms:
        query["reportIntervalMs"] = interval_ms
    return query


def failure_of(answer: dict) -> tuple[str, list[str]]:
    assert answer["final"] is True and set(answer) <= {"id", "failure", "final"}, answer
    return answer["failure"]["code"], [v.get("field", "") for v in answer["failure"].get("fieldViolations", [])]


# --- 1. the engine's info -------------------------------------------------------------

def test_engine_info(engine):
    engine.send({"id": "info", "getEngineInfo": {}})
    [answer] = engine.answers("info")
    info = json_format.ParseDict(answer["getEngineInfo"], epb.GetEngineInfoResponse())
    expected = Service(ServerConfig()).get_engine_info(epb.GetEngineInfoRequest(), Call())
    assert info.version == expected.version and info.version
    names = [p.name for p in info.presets]
    assert names == [p.name for p in expected.presets] and "classic" in names
    assert info.max_concurrent_searches == 2 and answer["final"] is True
    assert info.default_budget == expected.default_budget and info.stopping_rule == expected.stopping_rule
    assert info.default_budget.iterations > 0 and info.stopping_rule.min_gain > 0


# --- 2. hints at once, equal to the gRPC service's ------------------------------------

def test_two_hints_at_once_match_the_service(engine):
    matches = {"h1": choice_position(), "h2": position(seed=5)}
    for query_id, match in matches.items():
        engine.send(hint_query(query_id, match, seed=3, iterations=300))
    service = Service(ServerConfig())
    service.warm_up(ServerConfig().presets_to_warm)     # as the engine does at start: the same tables
    for query_id, match in reversed(matches.items()):
        [answer] = engine.answers(query_id)
        assert answer["id"] == query_id and answer["final"] is True
        assert answer["getHint"]["hint"]["stats"]["stoppedBecause"] in ("STOP_REASON_BUDGET", "STOP_REASON_SETTLED")
        got = json_format.ParseDict(answer["getHint"], epb.GetHintResponse())
        want = service.get_hint(epb.GetHintRequest(view=view_msg(match), budget=epb.Budget(iterations=300),
                                                   seed=3), Call())
        legal = service.list_legal_moves(rpb.ListLegalMovesRequest(view=view_msg(match)), Call()).moves
        assert sorted(m.move.text for m in got.hint.moves) == sorted(m.text for m in legal)
        assert [m.move.text for m in got.hint.moves] == [m.move.text for m in want.hint.moves]
        assert got.hint.best == want.hint.best and not got.hint.cut_short
        for response in (got, want):
            response.hint.stats.ClearField("elapsed_ms")
            response.hint.stats.ClearField("cpu_ms")
        assert got == want                      # the completed view too


# --- 3. interim reports ---------------------------------------------------------------

def test_reports_come_before_the_final_hint(engine):
    engine.send(hint_query("r", choice_position(), interval_ms=20, time_ms=400))
    answers = engine.answers("r")
    assert len(answers) >= 2 and not any(a.get("final") for a in answers[:-1])
    assert all("view" not in a["getHint"] and a["getHint"]["hint"]["moves"] for a in answers[:-1])
    final = answers[-1]["getHint"]
    assert final["hint"]["moves"] and final["view"]["hand"] and not final["hint"].get("cutShort")


# --- 4. terminate ----------------------------------------------------------------------

def test_terminate_cuts_a_long_hint_short(engine):
    """Terminated, a hint of a 10 s budget answers at once, cut short (its
    search time well short of the budget, whatever the machine's load)."""
    engine.send(hint_query("long", choice_position(), time_ms=10_000))
    engine.send({"id": "ping", "getEngineInfo": {}})
    engine.final("ping")                        # both read: the hint's search is under way
    time.sleep(0.2)
    engine.send({"id": "stop", "terminate": {"queryId": "long"}})
    assert engine.answers("stop") == [{"id": "stop", "terminate": {"queryId": "long"}, "final": True}]
    [answer] = engine.answers("long")
    hint = answer["getHint"]["hint"]
    assert hint["cutShort"] is True and hint["moves"] and float(hint["stats"]["elapsedMs"]) < 5_000
    # and a hint with reports, terminated after its first one
    engine.send(hint_query("watched", choice_position(), interval_ms=50, time_ms=10_000))
    assert not engine.next("watched").get("final")
    engine.send({"id": "stop2", "terminate": {"queryId": "watched"}})
    assert engine.final("stop2")["terminate"] == {"queryId": "watched"}
    assert engine.final("watched")["getHint"]["hint"]["cutShort"] is True


# --- 5. bad lines ----------------------------------------------------------------------

def test_bad_lines_get_failures_and_the_engine_goes_on(engine):
    match = choice_position()
    view = as_dict(view_msg(match))
    last = len(view["hand"]) - 1
    view["hand"][last] = "ZZ"
    engine.send(hint_query("busy", match, interval_ms=50, time_ms=10_000))
    assert not engine.next("busy").get("final")    # in flight
    cases = [
        ("not json", "", ""),
        ('[1, 2]', "", ""),
        ({"id": "u", "getEngineInfo": {}, "colour": "red"}, "u", "colour"),
        ({"id": "t", "getHint": {"budget": {"iterations": "many"}}}, "t", "budget.iterations"),
        ({"id": "c", "getHint": {"view": view, "budget": {"iterations": 100}}}, "c", f"view.hand[{last}]"),
        ({"id": "busy", "getEngineInfo": {}}, "busy", "id"),
        ({"id": "k", "terminate": {"queryId": "nobody"}}, "k", "terminate.query_id"),
        ({"getEngineInfo": {}}, "", "id"),
        ({"id": "n"}, "n", "request"),
        ({"id": "i", "getEngineInfo": {}, "reportIntervalMs": 5}, "i", "report_interval_ms"),
    ]
    for line, query_id, field in cases:
        engine.send(line)
        answer = engine.next(query_id)
        while query_id == "busy" and not answer.get("final"):     # the hint in flight reports meanwhile
            answer = engine.next(query_id)
        code, fields = failure_of(answer)
        assert (code, fields[0]) == ("INVALID_ARGUMENT", field), line
    engine.send({"id": 7, "getEngineInfo": {}})                   # a number, as JSON-RPC's ids may be
    answer = engine.next("")
    assert failure_of(answer) == ("INVALID_ARGUMENT", ["id"])
    assert answer["failure"]["message"] == 'id: a string of the client\'s choosing, e.g. "7", not a JSON number'
    engine.proc.stdin.write(b"\xff\xfe\n")      # not UTF-8
    engine.proc.stdin.flush()
    code, fields = failure_of(engine.next(""))
    assert (code, fields[0]) == ("INVALID_ARGUMENT", "")
    engine.send("")                             # a blank line: no answer
    engine.send({"id": "after", "getEngineInfo": {}})
    assert engine.final("after")["getEngineInfo"]["version"]
    engine.send({"id": "stop-busy", "terminate": {"queryId": "busy"}})
    engine.final("stop-busy")
    assert engine.final("busy")["getHint"]["hint"]["cutShort"] is True
    engine.send({"id": "again", "terminate": {"queryId": "busy"}})     # finished: no longer in flight
    assert failure_of(engine.next("again"))[1] == ["terminate.query_id"]


@pytest.mark.parametrize("stopped", [0, 130])
def test_a_stop_slower_than_its_deadline_keeps_its_status(stopped):
    """The stop's deadline, finding nothing left to abandon (the exit itself was
    slow: on a busy machine, its wait for threads), ends the process with the
    status the stop was ending with: a SIGINT's 130 came out as 0."""
    code = ("import logging, time; from cirulla.server.stopping import StopDeadline; "
            f"StopDeadline(0.1, list, ('query', 'queries'), logging.getLogger(), stopped={stopped}); time.sleep(60)")
    assert subprocess.run([sys.executable, "-c", code], timeout=ANSWER_S).returncode == stopped


def test_a_signal_ends_the_engine_whose_app_stopped_reading():
    """An app that stops reading fills the pipe: the query's thread blocks in its
    write, holding the output's lock. The stop waited for that lock, and so did
    its deadline's exit: the engine never ended. Now it abandons the query and
    exits 70."""
    proc = subprocess.Popen([*command(), "--max-budget-ms", "60000", "--warm-presets", ""], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        query = hint_query("flood", choice_position(), interval_ms=10, time_ms=60_000)
        proc.stdin.write((json.dumps(query) + "\n").encode())
        proc.stdin.flush()
        time.sleep(5)                       # interim answers every 10 ms, none read: the pipe fills
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(ANSWER_S) == 70    # a wait past ANSWER_S fails the test
    finally:
        proc.kill()
        proc.wait()


# --- 6. end of input ------------------------------------------------------------------

def test_end_of_input_waits_for_the_queries_in_flight(fresh):
    e = fresh("--warm-presets", "")
    e.send(hint_query("last", choice_position(), time_ms=300))
    code = e.close()                            # stdin closed at once
    assert code == 0
    [answer] = e.answers("last")
    assert answer["getHint"]["hint"]["moves"] and not answer["getHint"]["hint"].get("cutShort")


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 0)])
def test_a_signal_terminates_the_queries_and_exits_promptly(fresh, signum, code):
    """The query in flight answers, cut short, and the engine exits: long
    before the query's 60 s budget would have ended it, on any machine."""
    e = fresh("--warm-presets", "", "--max-budget-ms", "60000")
    e.send(hint_query("slow", choice_position(), interval_ms=50, time_ms=60_000))
    e.next("slow")
    e.proc.send_signal(signum)
    assert e.proc.wait(ANSWER_S) == code        # a wait past ANSWER_S fails the test
    assert e.final("slow")["getHint"]["hint"]["cutShort"] is True


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_queries_that_ignore_termination_cannot_keep_the_engine_alive(fresh, signum):
    """Hints that spin for ever in pure Python, holding the GIL, deaf to their
    termination, on a pool's workers (which interpreter exit joins): a signal
    still ends the engine within its half second (and one more), with the
    status for abandoned work (70), and the log names the queries abandoned."""
    from spinning import SPINNING
    e = fresh("--warm-presets", "", launcher=[sys.executable, str(Path(__file__).with_name("spinning.py")), "engine"])
    query_ids = [f"spin-{n}" for n in range(4)]
    for query_id in query_ids:
        e.send(hint_query(query_id, choice_position()))
    give_up = time.monotonic() + ANSWER_S
    while e.log.read_text().count(SPINNING) < len(query_ids):
        assert time.monotonic() < give_up, "the hints did not all start:\n" + e.log.read_text()
        time.sleep(0.05)
    start = time.monotonic()
    e.proc.send_signal(signum)
    try:
        code = e.proc.wait(10)
    except subprocess.TimeoutExpired:
        pytest.fail("still running 10 s after the signal:\n" + e.log.read_text())
    elapsed = time.monotonic() - start
    log = e.log.read_text()
    assert elapsed < 1.5, f"{elapsed:.2f} s from the signal to the exit:\n{log}"
    assert code == 70, log                          # the documented status for abandoned work
    abandoned = re.search(r"ERROR cirulla.engine: .*abandon.*", log)
    assert abandoned and "abandoning 4 queries still running" in abandoned.group(), log
    for query_id in query_ids:
        assert f"get_hint query {query_id!r}" in abandoned.group(), log


# --- 7. analysis -----------------------------------------------------------------------

def test_analysis_answers_each_decision_then_the_summary(engine):
    match = Match(Rules(hands=1), seed=4)
    greedy = GreedyPlayer()
    while not match.is_over:
        match.play(greedy.choose(match))
    engine.send({"id": "a", "analyzeGame": {"record": as_dict(record.to_proto(match)), "iterations": 200,
                                            "seed": "1"}})
    answers = engine.answers("a", timeout=30)
    total = analysis.decision_count(match)
    assert [bool(a.get("final")) for a in answers] == [False] * total + [True]
    assert all("decision" in a["analyzeGame"] for a in answers[:-1]) and "summary" in answers[-1]["analyzeGame"]
    assert [a["analyzeGame"].get("done") for a in answers] == list(range(1, total + 1)) + [total]
    reasons = [a["analyzeGame"]["decision"].get("reason", "") for a in answers[:-1]]
    assert [r for r in reasons if runs_out_of_order(r)] == []      # cards named as a Move prints them


def test_a_terminated_analysis_fails_cancelled(engine):
    match = Match(Rules(hands=1), seed=6)
    greedy = GreedyPlayer()
    while not match.is_over:
        match.play(greedy.choose(match))
    engine.send({"id": "b", "analyzeGame": {"record": as_dict(record.to_proto(match)), "iterations": 20_000}})
    assert "decision" in engine.next("b")["analyzeGame"]
    engine.send({"id": "stop-b", "terminate": {"queryId": "b"}})
    assert engine.final("stop-b")["terminate"] == {"queryId": "b"}
    answers = engine.answers("b")                   # perhaps a decision that was ready, then the failure
    assert failure_of(answers[-1])[0] == "CANCELLED"
