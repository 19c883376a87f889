"""What an operator watches: Prometheus metrics on --metrics-listen (off by
default), call log lines as JSON with a request id the client gets back, and
the connection age that makes round_robin clients resolve the replicas again."""
from __future__ import annotations

import json
import logging
import os
import re
import signal
import socket
import time
import urllib.request

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families
from test_server_process import Process

from cirulla.server.calls import JsonFormatter, TextFormatter
from cirulla.server.config import parse_config
from cirulla.server.metrics import LATENCY_BUCKETS
from cirulla.solver import record
from cirulla.v1 import analysis_service_pb2 as apb
from cirulla.v1 import analysis_service_pb2_grpc
from cirulla.v1 import engine_service_pb2 as epb
from cirulla.v1 import rules_service_pb2 as rpb
from server_support import choice_position, failure, position, running, stubs, view_msg

LIST_MOVES = "/cirulla.v1.RulesService/ListLegalMoves"
GET_HINT = "/cirulla.v1.EngineService/GetHint"
CALL_FIELDS = {"time", "level", "logger", "message", "method", "status", "ms", "peer", "request_id"}

Samples = dict[tuple[str, frozenset], float]


def scrape(address: str) -> Samples:
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=5) as answer:
        text = answer.read().decode()
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def calls(samples: Samples, method: str, code: str) -> float:
    return value(samples, "cirulla_calls_total", method=method, code=code)


def wait_for(condition, seconds: float = 10.0) -> bool:
    """Poll (a generous bound: the machine is shared)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def listening_ports(pid: int) -> set[int]:
    """The TCP ports process `pid` listens on (Linux: its socket fds in /proc/net/tcp*)."""
    sockets = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            sockets.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except FileNotFoundError:           # closed meanwhile
            pass
    ports = set()
    for table in ("tcp", "tcp6"):
        with open(f"/proc/{pid}/net/{table}") as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and f"socket:[{fields[9]}]" in sockets:      # 0A: LISTEN
                    ports.add(int(fields[1].rpartition(":")[2], 16))
    return ports


@pytest.fixture
def json_log():
    """The server's log lines in the json format, as they are written."""
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(self.format(record))

    handler = Collect()
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("cirulla.server")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield lines
    logger.removeHandler(handler)
    logger.setLevel(level)


def call_lines(lines: list[str], method: str | None = None) -> list[dict]:
    parsed = [json.loads(line) for line in lines]
    return [line for line in parsed if "method" in line and method in (None, line["method"])]


@pytest.fixture(scope="module")
def server():
    with running(metrics_listen="127.0.0.1:0", max_concurrent_searches=2, max_threads=2, slot_wait_ms=10_000,
                 warm_presets="") as s:
        yield s


@pytest.fixture(scope="module")
def api(server):
    api = stubs(server)
    yield api
    api.channel.close()


# --- metrics -------------------------------------------------------------------------

def test_calls_are_counted_by_method_and_code(server, api):
    match = choice_position()
    before = scrape(server.metrics_address)
    api.rules.ListLegalMoves(rpb.ListLegalMovesRequest(view=view_msg(match)), timeout=10)
    assert failure(api.rules.ListLegalMoves, rpb.ListLegalMovesRequest(), timeout=10)[0] == \
        grpc.StatusCode.INVALID_ARGUMENT
    hint = api.engine.GetHint(epb.GetHintRequest(view=view_msg(match), budget=epb.Budget(iterations=400)),
                              timeout=10).hint
    unknown = api.channel.unary_unary("/no.such.Service/Method", request_serializer=lambda b: b,
                                      response_deserializer=lambda b: b)
    assert failure(unknown, b"", timeout=10)[0] == grpc.StatusCode.UNIMPLEMENTED
    after = scrape(server.metrics_address)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("cirulla_calls_total", method=LIST_MOVES, code="OK") == 1
    assert moved("cirulla_calls_total", method=LIST_MOVES, code="INVALID_ARGUMENT") == 1
    assert moved("cirulla_calls_total", method=GET_HINT, code="OK") == 1
    # a name the caller made up is not a label of its own
    assert moved("cirulla_calls_total", method="other", code="UNIMPLEMENTED") == 1
    assert not any("no.such" in str(labels) for _, labels in after)
    assert moved("cirulla_call_duration_seconds_count", method=LIST_MOVES) == 2
    assert moved("cirulla_call_duration_seconds_count", method=GET_HINT) == 1
    assert moved("cirulla_call_duration_seconds_sum", method=GET_HINT) > 0
    buckets = sorted(float(dict(labels)["le"]) for name, labels in after
                     if name == "cirulla_call_duration_seconds_bucket" and dict(labels)["method"] == GET_HINT)
    assert buckets == [*LATENCY_BUCKETS, float("inf")]
    assert moved("cirulla_call_duration_seconds_bucket", method=GET_HINT, le="+Inf") == 1
    assert moved("cirulla_call_duration_seconds_bucket", method=GET_HINT, le="60.0") == 1
    assert hint.stats.iterations > 0 and moved("cirulla_search_iterations_total") == hint.stats.iterations
    assert value(after, "process_resident_memory_bytes") > 0       # the process collector


def test_streams_are_counted_when_they_end(server, api):
    before = scrape(server.metrics_address)
    updates = list(api.engine.StreamHint(epb.StreamHintRequest(
        view=view_msg(choice_position()), budget=epb.Budget(iterations=300), interval_ms=10), timeout=10))
    assert updates[-1].final
    reflection = reflection_pb2_grpc.ServerReflectionStub(api.channel)
    assert list(reflection.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]),
                                                 timeout=10))
    watch = health_pb2_grpc.HealthStub(api.channel).Watch(health_pb2.HealthCheckRequest(), timeout=30)
    assert next(watch).status == health_pb2.HealthCheckResponse.SERVING
    while_open = scrape(server.metrics_address)
    watch.cancel()
    counted = {"/cirulla.v1.EngineService/StreamHint": "OK",
               "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": "OK"}
    for method, code in counted.items():
        assert calls(while_open, method, code) - calls(before, method, code) == 1, method
    assert value(while_open, "cirulla_search_iterations_total") - value(before, "cirulla_search_iterations_total") \
        == updates[-1].hint.stats.iterations
    # the open Watch is counted when it ends (and holds no handler thread meanwhile)
    watch_method = "/grpc.health.v1.Health/Watch"
    assert calls(while_open, watch_method, "CANCELLED") == calls(before, watch_method, "CANCELLED")
    assert wait_for(lambda: calls(scrape(server.metrics_address), watch_method, "CANCELLED")
                    == calls(before, watch_method, "CANCELLED") + 1)


def test_the_slot_gauges_move_while_searches_run(server, api):
    def gauges() -> tuple[float, float, float]:
        samples = scrape(server.metrics_address)
        return (value(samples, "cirulla_search_slots"), value(samples, "cirulla_search_slots_in_use"),
                value(samples, "cirulla_search_calls_waiting"))

    assert gauges() == (2, 0, 0)
    view = view_msg(choice_position())
    # two threads for a second and a half take both slots; the next call waits for one
    running_call = api.engine.GetHint.future(epb.GetHintRequest(view=view, budget=epb.Budget(
        time_ms=1_500, threads=2, exhaust=True)), timeout=30)
    assert wait_for(lambda: gauges() == (2, 2, 0)), gauges()
    waiting_call = api.engine.GetHint.future(epb.GetHintRequest(view=view, budget=epb.Budget(
        time_ms=100)), timeout=30)
    assert wait_for(lambda: gauges() == (2, 2, 1)), gauges()
    assert running_call.result().hint.moves and waiting_call.result().hint.moves
    assert wait_for(lambda: gauges() == (2, 0, 0)), gauges()


def test_analyses_in_flight(server):
    channel = grpc.insecure_channel(server.address)
    analysis = analysis_service_pb2_grpc.AnalysisServiceStub(channel)

    def in_flight() -> float:
        return value(scrape(server.metrics_address), "cirulla_analyses_in_flight")

    try:
        assert in_flight() == 0
        stream = analysis.AnalyzeGame(apb.AnalyzeGameRequest(record=record.to_proto(position(3, plies=6)),
                                                             iterations=200_000, threads=1), timeout=60)
        assert wait_for(lambda: in_flight() == 1)
        stream.cancel()
        assert wait_for(lambda: in_flight() == 0)
    finally:
        channel.close()


def test_a_metrics_port_in_use_is_an_error():
    from cirulla.server.app import build
    from cirulla.server.config import ServerConfig
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        with pytest.raises(RuntimeError, match="cannot serve metrics on 127.0.0.1:.*in use"):
            build(ServerConfig(listen="127.0.0.1:0", metrics_listen=f"127.0.0.1:{busy.getsockname()[1]}",
                               warm_presets=""))


def test_metrics_are_off_by_default():
    with running(warm_presets="") as s:
        assert s.metrics_server is None and s.metrics_address is None
    assert parse_config([], env={}).metrics_listen is None


# --- request ids and log lines -----------------------------------------------------------

def test_the_request_id_comes_back_and_is_in_the_log_line(api, caplog):
    caplog.set_level(logging.INFO, logger="cirulla.server")
    view = view_msg(choice_position())
    _, call = api.rules.ListLegalMoves.with_call(rpb.ListLegalMovesRequest(view=view), timeout=10,
                                                 metadata=[("x-request-id", "req-42")])
    assert ("x-request-id", "req-42") in call.trailing_metadata()
    with pytest.raises(grpc.RpcError) as refused:       # none given: one made up, the error's details kept
        api.rules.ListLegalMoves(rpb.ListLegalMovesRequest(), timeout=10)
    trailers = dict(refused.value.trailing_metadata())
    made_up = trailers["x-request-id"]
    assert re.fullmatch(r"[0-9a-f]{32}", made_up) and "grpc-status-details-bin" in trailers
    records = [r for r in caplog.records if getattr(r, "call", {}).get("method") == LIST_MOVES]
    assert [r.call["request_id"] for r in records] == ["req-42", made_up]
    # the text line as before, the request id at its end
    line = TextFormatter().format(records[0])
    assert re.search(rf"INFO cirulla.server: {LIST_MOVES} OK \d+\.\d ms request_id=req-42$", line), line


def test_request_ids_unfit_for_a_log_line_are_replaced():
    from cirulla.server.calls import MAX_REQUEST_ID, request_id
    assert request_id([("x-request-id", "a" * 500)]) == "a" * MAX_REQUEST_ID
    for unfit in ("", "two\nlines", "caf\u00e9", b"bytes"):
        assert re.fullmatch(r"[0-9a-f]{32}", request_id([("x-request-id", unfit)])), unfit


def test_json_log_lines(api, json_log):
    api.rules.ListLegalMoves(rpb.ListLegalMovesRequest(view=view_msg(choice_position())), timeout=10,
                             metadata=[("x-request-id", 'quote " and \\ back')])
    failure(api.rules.ListLegalMoves, rpb.ListLegalMovesRequest(), timeout=10)
    ok, bad = call_lines(json_log, LIST_MOVES)
    assert set(ok) == set(bad) == CALL_FIELDS
    assert (ok["status"], bad["status"]) == ("OK", "INVALID_ARGUMENT")
    assert ok["request_id"] == 'quote " and \\ back' and ok["level"] == "INFO" and ok["logger"] == "cirulla.server"
    assert ok["peer"].startswith("ipv4:127.0.0.1:") and isinstance(ok["ms"], float)
    assert ok["message"].startswith(f"{LIST_MOVES} OK ")
    # a traceback stays in its line
    logger = logging.getLogger("cirulla.server")
    try:
        raise ValueError("two\nlines")
    except ValueError:
        logger.exception("failed")
    assert len(json_log[-1].splitlines()) == 1 and "two\\nlines" in json.loads(json_log[-1])["exception"]


def test_the_process_logs_json_and_serves_metrics():
    """The flags through the environment: every stderr line is a JSON object,
    and the metrics port is the process's second listening port."""
    p = Process(env={"CIRULLA_LOG_FORMAT": "json", "CIRULLA_METRICS_LISTEN": "127.0.0.1:0",
                     "CIRULLA_WARM_PRESETS": ""})
    try:
        assert p.metrics_port is not None
        assert listening_ports(p.proc.pid) == {p.port, p.metrics_port}
        _, call = p.engine.GetEngineInfo.with_call(epb.GetEngineInfoRequest(), timeout=10,
                                                   metadata=[("x-request-id", "from-the-client")])
        assert ("x-request-id", "from-the-client") in call.trailing_metadata()
        samples = scrape(f"127.0.0.1:{p.metrics_port}")
        assert calls(samples, "/cirulla.v1.EngineService/GetEngineInfo", "OK") == 1
        p.proc.send_signal(signal.SIGTERM)
        assert p.proc.wait(15) == 0
    finally:
        p.stop()
    lines = [json.loads(line) for line in p.lines]        # each one whole
    assert all({"time", "level", "logger", "message"} <= set(line) for line in lines)
    info = [line for line in lines if line.get("method") == "/cirulla.v1.EngineService/GetEngineInfo"]
    assert len(info) == 1 and info[0]["request_id"] == "from-the-client" and set(info[0]) == CALL_FIELDS
    assert any({"logger": "cirulla.server", "message": "stopped"}.items() <= line.items() for line in lines)


def test_the_process_opens_no_metrics_port_by_default():
    p = Process("--warm-presets", "")
    try:
        assert p.metrics_port is None and listening_ports(p.proc.pid) == {p.port}
    finally:
        p.stop()


# --- connection age ----------------------------------------------------------------------

def _peers_of_calls(server, json_log: list[str], seconds: float) -> set[str]:
    """Calls on one channel for `seconds`: each must succeed; the peers (client connections) they came on."""
    api = stubs(server)
    view = view_msg(choice_position())
    del json_log[:]
    end = time.monotonic() + seconds
    made = 0
    try:
        while time.monotonic() < end:
            request = epb.GetHintRequest(view=view, budget=epb.Budget(iterations=100))
            assert api.engine.GetHint(request, timeout=10).hint.moves
            made += 1
    finally:
        api.channel.close()
    lines = call_lines(json_log, GET_HINT)
    assert len(lines) == made and {line["status"] for line in lines} == {"OK"}
    return {line["peer"] for line in lines}


def test_connections_past_their_age_are_replaced_without_failing_calls(json_log):
    with running(max_connection_age_ms=300, max_connection_age_grace_ms=5_000, warm_presets="") as s:
        assert len(_peers_of_calls(s, json_log, 2.0)) >= 2
    with running(warm_presets="") as s:                 # the default: one connection for good
        assert len(_peers_of_calls(s, json_log, 1.0)) == 1


def test_connection_age_flags_and_variables():
    config = parse_config(["--max-connection-age-ms", "300000"],
                          env={"CIRULLA_MAX_CONNECTION_AGE_GRACE_MS": "30000", "CIRULLA_LOG_FORMAT": "json"})
    assert (config.max_connection_age_ms, config.max_connection_age_grace_ms, config.log_format) == \
        (300_000, 30_000, "json")
    for argv in (["--max-connection-age-ms", "-1"], ["--log-format", "xml"], ["--metrics-listen", "9090"]):
        with pytest.raises(SystemExit):
            parse_config(argv, env={})
