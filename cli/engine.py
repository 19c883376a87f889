"""`cirulla engine`: the engine embedded in an app, as JSON lines on standard
input and output (the convention of KataGo's analysis engine).

An app runs `cirulla engine` as a child process and writes one query per line,
a cirulla.v1.EngineQuery in protobuf's JSON mapping: an `id` of its choosing
and one request (getHint, chooseMove, getEngineInfo, listLegalMoves,
replayRecord, analyzeGame, terminate). Each answer is one line, a
cirulla.v1.EngineAnswer carrying the query's id: the request's response, or a
`failure` (the gRPC call's status as plain fields, cirulla.v1.Failure).
`"final": true` marks a query's last answer; interim answers leave it out
(proto3 JSON omits false). Blank lines are ignored; standard output carries
answers and nothing else, logs go to standard error.

    > {"id": "i", "getEngineInfo": {}}
    > {"id": "h", "getHint": {"view": {...}, "budget": {"timeMs": 300}}, "reportIntervalMs": 100}
    < {"id": "i", "getEngineInfo": {"version": "0.1.0", "presets": [...], ...}, "final": true}
    < {"id": "h", "getHint": {"hint": {"moves": [...], "best": {...}, ...}}}
    < {"id": "h", "getHint": {"hint": {...}, "view": {...}}, "final": true}

- Queries run at once, each on its own thread, so answers to different queries
  come in any order. A search takes the search slots it needs (one per
  thread, --max-concurrent-searches in all); a query that finds them taken
  waits its turn (first come, first served) rather than fail: the engine
  waits up to an hour for a slot with up to 1000 queries waiting, where the
  gRPC server refuses at once with RESOURCE_EXHAUSTED.
- getHint answers once, with what EngineService.GetHint returns; with
  reportIntervalMs (10..60000) it also sends the ranking so far at that
  interval while the search runs (interim answers with the hint alone).
  analyzeGame answers once per decision, then with the summary (final).
- A query has no deadline: its budget bounds its search (the server's caps
  apply: --max-budget-ms, and the default --default-budget-ms).
- {"id": "t", "terminate": {"queryId": "h"}} stops query h: the engine
  acknowledges with {"id": "t", "terminate": {"queryId": "h"}, "final": true},
  then h ends with its own final answer, a hint with its best so far
  (cutShort), or a failure CANCELLED: an analysis, or a query terminated
  before its search began. A query still waiting for a search slot ends when
  it gets one.
- Bad lines get a failure INVALID_ARGUMENT with the id if one could be read
  (else "": every answer has its "id" key, empty or not), and the engine goes on. Problems with the line itself name
  fields of the EngineQuery (`id`, `request`, `report_interval_ms`,
  `terminate.query_id`, `get_hint.budget.iterations`; "" for a line that is
  not a JSON object); problems with the request name its fields as its gRPC
  call would (`view.hand[2]`).
- End of input: the queries in flight finish and are answered, then exit 0.
  SIGINT or SIGTERM: every query in flight is terminated, those that answer
  within half a second are answered, then exit 130 (SIGINT) or 0 (SIGTERM).
  A query still running then (one that ignores its termination: a defect) is
  abandoned without its final answer: an ERROR line names it (its id, kind
  and where its thread is), and the engine exits at once with 70 (EX_SOFTWARE,
  server/stopping.py), whatever threads it leaves behind; its exit never takes
  more than 0.3 s past the half second.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Generator
from contextlib import closing
from types import FrameType
from typing import Any, BinaryIO

import grpc
from google.protobuf import json_format

from cirulla.server.config import ConfigError, ServerConfig, flag_name
from cirulla.server.convert import Problems
from cirulla.server.errors import BadRequest, RpcError, failure_of
from cirulla.server.service import Service, return_large_blocks_when_freed
from cirulla.server.stopping import OVERRUN_SECONDS, StopDeadline, Unfinished
from cirulla.solver.bounds import Descriptor, FieldType, field_range
from cirulla.v1.embedded_engine_pb2 import EngineAnswer, EngineQuery, Failure, Terminate

from . import Subcommands
from .remote import OK, USAGE, CliError

log = logging.getLogger("cirulla.engine")

# Queries past the search slots wait their turn rather than fail (see the docstring).
SLOT_WAIT_MS = 3_600_000
MAX_WAITING = 2_000                  # the one peer may fill half of it: 1000 queries waiting
INTERRUPT_GRACE_S = 0.5         # after SIGINT/SIGTERM, for the terminated queries to answer
INTERRUPTED = 130
REPORT_INTERVAL_MS = field_range(EngineQuery, "report_interval_ms")     # the schema's range

FLAGS = ("max_concurrent_searches", "max_budget_ms", "default_budget_ms", "warm_presets", "log_level")

EXAMPLES = """examples:
  cirulla engine                                  queries on stdin, answers on stdout
  cirulla engine --max-concurrent-searches 2 --max-budget-ms 5000
  echo '{"id": "1", "getEngineInfo": {}}' | cirulla engine --warm-presets ''

a session (> a line written to the engine, < a line it writes back):
  > {"id": "h", "getHint": {"view": {...}, "budget": {"timeMs": 2000}}, "reportIntervalMs": 500}
  < {"id": "h", "getHint": {"hint": {...}}}
  > {"id": "t", "terminate": {"queryId": "h"}}
  < {"id": "t", "terminate": {"queryId": "h"}, "final": true}
  < {"id": "h", "getHint": {"hint": {..., "cutShort": true}, "view": {...}}, "final": true}

exit codes: 0 end of input (every query answered) or SIGTERM, 1 failed, 2 bad usage,
130 interrupted (SIGINT), 70 a signal had to abandon queries that ignored their termination
"""


class _Stop(Exception):
    """SIGTERM, raised in the main thread."""


# --- one query: the call its service method gets --------------------------------------

class Query:
    """A query in flight, and the call (server.limits.Call) its service method
    gets: no deadline of its own; it ends when it is terminated or done, and
    ending it trips what the service hung on it (the search's cancel token)."""

    def __init__(self, query_id: str, message: EngineQuery):
        self.id = query_id
        self.message = message
        self.kind = message.WhichOneof("request")
        self.terminated = False
        self.ended = False
        # the service asked to hear of the end after it came: its search began
        # (or would have) with nothing to do
        self.began_after_end = False
        self.thread: threading.Thread | None = None
        self.started = time.monotonic()
        self._callbacks: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    def time_remaining(self) -> float | None:
        return None

    def peer(self) -> str:
        return "engine"                     # one client: the process on the other end of the pipe

    def add_callback(self, callback: Callable[[], None]) -> bool:
        with self._lock:
            if self.ended:
                self.began_after_end = True
                return False
            self._callbacks.append(callback)
            return True

    def terminate(self) -> None:
        self.terminated = True
        self.end()

    cancel = terminate                      # (the service gives up on a caller that does not take its answer)

    def end(self) -> None:
        with self._lock:
            if self.ended:
                return
            self.ended = True
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()


# --- the engine ------------------------------------------------------------------------

class Engine:
    """Reads queries, runs each on its own thread, writes the answers."""

    def __init__(self, service: Service, out: BinaryIO):
        self.service = service
        self._out = out                         # a binary stream
        self._lock = threading.Lock()           # the output and the queries in flight
        self._in_flight: dict[str, Query] = {}
        self._broken = False

    # the output: whole lines under the lock

    def _write(self, answer: EngineAnswer) -> None:
        """Write one answer; the caller holds the lock."""
        if self._broken:
            return
        try:
            self._out.write(_line(answer).encode("utf-8"))
            self._out.flush()
        except (OSError, ValueError) as e:      # the app closed our output: stop working for it
            self._broken = True
            log.error("cannot write answers (%s): terminating every query", e)
            for query in self._in_flight.values():
                query.terminate()

    def send(self, answer: EngineAnswer) -> None:
        with self._lock:
            self._write(answer)

    def _finish(self, query: Query, answer: EngineAnswer) -> None:
        """The query's final answer; it is no longer in flight (its id is free again)."""
        answer.id = query.id
        answer.final = True
        with self._lock:
            self._in_flight.pop(query.id, None)
            self._write(answer)

    @property
    def broken(self) -> bool:
        return self._broken

    # the input

    def handle(self, raw: bytes) -> None:
        """One input line: a query started, a terminate done, or a failure answered."""
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError as e:
            with self._lock:
                self._refuse("", BadRequest.one("", f"the line is not UTF-8: {e}"))
            return
        if not line:
            return
        try:
            message = _parse(line)
        except BadRequest as e:
            with self._lock:
                self._refuse(_id_in(line), e)
            return
        problems = Problems()
        if not message.id:
            problems.add("id", "required: every query needs an id of the client's choosing")
        kind = message.WhichOneof("request")
        if kind is None:
            problems.add("request", "required: name one request (getHint, chooseMove, getEngineInfo, "
                                    "listLegalMoves, replayRecord, analyzeGame or terminate)")
        interval, (lo, hi) = message.report_interval_ms, REPORT_INTERVAL_MS
        if interval and not lo <= interval <= hi:
            problems.add("report_interval_ms", f"{interval} is out of range {lo}..{hi} (0: no reports)")
        with self._lock:
            if message.id in self._in_flight:
                problems.add("id", f"{message.id!r} is the id of a query in flight")
            if kind == "terminate" and message.terminate.query_id not in self._in_flight:
                problems.add("terminate.query_id",
                             f"{message.terminate.query_id!r} is not the id of a query in flight")
            if problems.items:
                self._refuse(message.id, BadRequest(problems.one_per_field()))
                return
            if kind == "terminate":
                target = self._in_flight[message.terminate.query_id]
                log.info("query %s terminates query %s", message.id, target.id)
                target.terminate()              # its final answer waits for the lock: the ack comes first
                self._write(EngineAnswer(id=message.id, terminate=Terminate(query_id=target.id), final=True))
                return
            query = Query(message.id, message)
            self._in_flight[query.id] = query
        query.thread = threading.Thread(target=self._run, args=(query,), name=f"cirulla-query-{query.id}",
                                        daemon=True)
        query.thread.start()

    def _refuse(self, query_id: str, error: BadRequest) -> None:
        """Answer a line that starts no query; the caller holds the lock."""
        log.info("query %r refused: %s", query_id, error.message)
        self._write(_failure(query_id, error))

    # a query's thread

    def _run(self, query: Query) -> None:
        start = time.perf_counter()
        outcome = "OK"
        try:
            final = self._answers(query)
        except Exception as e:                  # noqa: BLE001 - every failure gets an answer
            if not isinstance(e, RpcError):
                log.exception("query %s (%s) failed", query.id, query.kind)
            final = EngineAnswer(failure=failure_of(e))
        finally:
            query.end()                         # the call is over: whatever hangs on it stops
        if final.HasField("failure"):
            outcome = final.failure.code
        elif query.terminated:
            outcome = "TERMINATED"
        self._finish(query, final)
        log.info("query %s %s %s %.1f ms", query.id, query.kind, outcome, (time.perf_counter() - start) * 1000)

    def _answers(self, query: Query) -> EngineAnswer:
        """Run the query, sending its interim answers; its final answer."""
        if query.ended:                         # terminated before its thread ran
            return _cancelled(query)
        kind, request, service = query.kind, getattr(query.message, query.kind), self.service
        # the service's streams are generators: closing one early ends what it runs
        if kind == "get_hint" and query.message.report_interval_ms:
            reports = service.get_hint_reports(request, query, query.message.report_interval_ms)
            assert isinstance(reports, Generator)
            with closing(reports):
                for hint, final in reports:
                    if final:
                        return _cancelled(query) if query.began_after_end else EngineAnswer(get_hint=hint)
                    self.send(EngineAnswer(id=query.id, get_hint=hint))
            return _cancelled(query)            # never happens: the reports end with the final one
        if kind == "analyze_game":
            responses = service.analyze_game(request, query)
            assert isinstance(responses, Generator)
            with closing(responses):
                for response in responses:
                    if response.HasField("summary"):
                        return EngineAnswer(analyze_game=response)
                    self.send(EngineAnswer(id=query.id, analyze_game=response))
            return _cancelled(query)            # stopped before its summary: terminated
        response = getattr(service, kind)(request, query)
        if query.began_after_end:
            return _cancelled(query)
        return EngineAnswer(**{kind: response})

    # the end

    def wait(self) -> None:
        """Until every query in flight has answered."""
        while True:
            with self._lock:
                running = [q.thread for q in self._in_flight.values() if q.thread and q.thread.is_alive()]
            if not running:
                return
            running[0].join(0.2)                # short waits: a signal gets through

    def _running(self) -> list[Query]:
        """The queries in flight whose thread runs, oldest first. Read without the
        lock (a copy of the dict is one step under the GIL): a write blocked on
        a full pipe holds the lock, and a stop must never wait for it."""
        queries = list(self._in_flight.values())
        return sorted((q for q in queries if q.thread is not None and q.thread.is_alive()), key=lambda q: q.started)

    def unfinished(self) -> list[Unfinished]:
        """What a stop that cannot wait for the queries in flight abandons."""
        now = time.monotonic()
        return [Unfinished(f"{query.kind} query {query.id!r}", now - query.started, query.thread.ident)
                for query in self._running() if query.thread is not None]

    def terminate_all(self, grace: float) -> None:
        """Terminate every query in flight and give them `grace` seconds to answer."""
        for query in list(self._in_flight.values()):
            query.terminate()
        end = time.monotonic() + grace
        for query in self._running():
            if query.thread is not None:
                query.thread.join(max(0.0, end - time.monotonic()))


def _line(answer: EngineAnswer) -> str:
    """The answer as one JSON line, its `id` first and always there: the JSON
    mapping leaves an empty string out, and an app reads answers by their id."""
    return json.dumps({"id": answer.id, **json_format.MessageToDict(answer)}) + "\n"


def _cancelled(query: Query) -> EngineAnswer:
    return EngineAnswer(failure=Failure(code=grpc.StatusCode.CANCELLED.name,
                                        message=f"query {query.id!r} was terminated"))


def _failure(query_id: str, error: BadRequest) -> EngineAnswer:
    return EngineAnswer(id=query_id, failure=failure_of(error), final=True)


# --- reading a line --------------------------------------------------------------------

def _parse(line: str) -> EngineQuery:
    """The line as an EngineQuery; BadRequest naming the field at fault."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as e:
        raise BadRequest.one("", f"not JSON: {e}") from None
    except RecursionError:                  # arrays or objects nested thousands deep
        raise BadRequest.one("", "not a cirulla.v1.EngineQuery: JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise BadRequest.one("", f"a JSON {_JSON_TYPES.get(type(data), 'value')}, not an object: a query is "
                                 '{"id": ..., "<request>": {...}}')
    query_id = data.get("id")
    if query_id is not None and not isinstance(query_id, str):     # (JSON-RPC's ids may be numbers; ours are text)
        example = f', e.g. "{query_id}"' if type(query_id) in (int, float) else ""
        raise BadRequest.one("id", f"a string of the client's choosing{example}, not a JSON "
                                   f"{_JSON_TYPES.get(type(query_id), 'value')}")
    try:
        return json_format.ParseDict(data, EngineQuery())
    except json_format.ParseError as e:
        text = str(e).splitlines()[0]           # not the list of the fields it could have named
        raise BadRequest.one(_field_of(text, data), f"not a cirulla.v1.EngineQuery: {text}") from None


_JSON_TYPES = {list: "array", str: "string", int: "number", float: "number", bool: "boolean",
               type(None): "null"}


def _id_in(line: str) -> str:
    """The id of a line that is not a query, if one can be read."""
    try:
        data = json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return ""
    query_id = data.get("id") if isinstance(data, dict) else None
    return query_id if isinstance(query_id, str) else ""


_REQUESTS = EngineQuery.DESCRIPTOR.oneofs_by_name["request"]


def _field_of(text: str, data: dict[str, Any]) -> str:
    """The field a json_format.ParseError names, as a path of proto field names:
    relative to the request for a field inside it (`view.hand`), as its gRPC
    call would name it, else to the query (`report_interval_ms`,
    `terminate.query_id`: terminate is the engine's own)."""
    message: Descriptor | None = EngineQuery.DESCRIPTOR
    at = re.search(r' at "?EngineQuery((?:\.\w+(?:\[\d+\])*)*)', text)
    if at:                                      # the full path of the message at fault
        names = [n for n in at.group(1).split(".") if n]
        unknown = re.search(r'has no field named "([^"]+)"|multiple "(\w+)" oneof fields', text)
        if unknown:
            names.append(unknown.group(1) or unknown.group(2))
    else:                                       # "Failed to parse view field: ..." from the request down
        names = re.findall(r"Failed to parse (\w+) field", text)
        if names and _field_named(message, names[0]) is None:
            kind = next((f for f in _REQUESTS.fields if f.name in data or f.json_name in data), None)
            if kind is not None:
                names = [kind.name, *names]
    if len(names) > 1:
        field = _field_named(message, names[0])
        if field is not None and field.containing_oneof is _REQUESTS and field.name != "terminate":
            names, message = names[1:], field.message_type      # the gRPC request's own paths
    path = []
    for component in names:
        split = re.fullmatch(r"(.*?)((?:\[\d+\])*)", component)
        assert split is not None, "(.*?) takes what the indices leave"
        name, index = split.groups()
        field = _field_named(message, name)
        path.append((field.name if field else name) + index)
        message = field.message_type if field else None
    return ".".join(path)


def _field_named(message: Descriptor | None, name: str) -> FieldType | None:
    if message is None:
        return None
    for field in message.fields:
        if name in (field.name, field.json_name):
            return field
    return None


# --- the command -----------------------------------------------------------------------

def engine_config(args: argparse.Namespace) -> ServerConfig:
    """The service's settings: the server's defaults, the flags given, and queries
    that wait for a search slot instead of failing."""
    given = {name: getattr(args, name) for name in FLAGS if getattr(args, name, None) is not None}
    try:
        return dataclasses.replace(ServerConfig(), slot_wait_ms=SLOT_WAIT_MS, max_waiting_searches=MAX_WAITING,
                                   **given)
    except ConfigError as e:
        sources = {name: f"{flag_name(name)} {value}" for name, value in given.items()}
        raise CliError(f"{e.source(sources)}: {e.message}", USAGE) from None


def run(args: argparse.Namespace, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
    """`cirulla engine`: serve the queries of standard input until its end. The
    process's own: after a signal, its stop's deadline stays armed for the exit."""
    config = engine_config(args)
    level = config.log_level.upper()
    if level not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        raise CliError(f"--log-level {config.log_level}: name DEBUG, INFO, WARNING or ERROR", USAGE)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])
    stdin = stdin or sys.stdin.buffer
    return_large_blocks_when_freed()
    engine = Engine(Service(config), stdout or sys.stdout.buffer)
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _raise_stop)
    try:
        engine.service.warm_up(config.presets_to_warm)
        log.info("engine ready: %d search slot(s), budgets up to %d ms", config.max_concurrent_searches,
                 config.max_budget_ms)
        for raw in iter(stdin.readline, b""):
            engine.handle(raw)
        engine.wait()
        log.info("end of input: every query answered")
        return 1 if engine.broken else OK
    except (KeyboardInterrupt, _Stop) as e:
        # armed for the exit too: it joins the threads of the pools (an analysis's searches)
        status = OK if isinstance(e, _Stop) else INTERRUPTED
        deadline = StopDeadline(INTERRUPT_GRACE_S + OVERRUN_SECONDS, engine.unfinished, ("query", "queries"), log,
                                stopped=status)
        log.info("%s: terminating the queries in flight", "SIGTERM" if isinstance(e, _Stop) else "interrupted")
        engine.terminate_all(INTERRUPT_GRACE_S)
        if engine.unfinished():             # their half second is up: no answer is coming
            deadline.abandon()
        return status
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    raise _Stop()


def add_parser(subparsers: Subcommands) -> argparse.ArgumentParser:
    """Add the `engine` command to `cirulla`'s subparsers; it runs `run`."""
    defaults = ServerConfig()
    p = subparsers.add_parser(
        "engine", help="the engine as JSON lines on stdin/stdout, for apps",
        description="The engine for an app that runs it as a child process: one query per line on\n"
                    "standard input (a cirulla.v1.EngineQuery in protobuf's JSON mapping: an id and\n"
                    "one request of the gRPC services), answers as lines on standard output (an\n"
                    "EngineAnswer with the query's id; \"final\": true on its last). Queries run at\n"
                    "once; getHint with reportIntervalMs sends interim rankings, terminate stops a\n"
                    "query. Queries past the search slots wait their turn (up to an hour, 1000 of\n"
                    "them) instead of failing. Logs go to standard error. At the end of input the\n"
                    "queries in flight finish, then exit 0. The protocol: proto/cirulla/v1/\n"
                    "embedded_engine.proto and `pydoc cirulla.cli.engine`.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--max-concurrent-searches", type=int, metavar="N",
                   help="search threads at once; more wait their turn (default: the cores, "
                        f"{defaults.max_concurrent_searches})")
    p.add_argument("--max-budget-ms", type=int, metavar="MS",
                   help=f"the largest time budget a query may ask for (default: {defaults.max_budget_ms}); an "
                        "iteration budget is bounded by it too")
    p.add_argument("--default-budget-ms", type=int, metavar="MS",
                   help="the time cap of a query that names no budget (the default budget, which stops much "
                        f"sooner once its answer is settled; default: {defaults.default_budget_ms})")
    p.add_argument("--warm-presets", metavar="P",
                   help="presets whose match-equity tables are built before the first query (comma-separated, "
                        f"'all' or ''; default: {defaults.warm_presets})")
    p.add_argument("--log-level", metavar="L", help=f"DEBUG, INFO, WARNING or ERROR (default: {defaults.log_level})")
    p.set_defaults(run=run, json=False)     # output is JSON lines anyway; `cirulla`'s error path reads args.json
    return p


def main(argv: list[str] | None = None) -> int:
    """`cirulla engine` on its own (the `cirulla` command registers it with add_parser)."""
    parser = argparse.ArgumentParser(prog="cirulla")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["engine", *(sys.argv[1:] if argv is None else argv)])
    try:
        return run(args)
    except CliError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.code


if __name__ == "__main__":
    sys.exit(main())
