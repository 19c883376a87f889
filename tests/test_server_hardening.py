"""The server against careless or hostile clients: undecodable stream messages,
long-lived streams, errors that echo huge input, probing for method names,
and a clean SIGTERM after each (the outside review's findings, one test or
more each)."""
from __future__ import annotations

import base64
import queue
import re
import signal
import threading
import time
from collections.abc import Iterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2
from test_server_process import Process

from cirulla.server.errors import field_violations
from cirulla.v1 import analysis_service_pb2 as apb
from cirulla.v1 import analysis_service_pb2_grpc
from cirulla.v1 import engine_service_pb2 as epb
from server_support import choice_position, failure, running, stubs, view_msg

INVALID = grpc.StatusCode.INVALID_ARGUMENT
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
REFLECTION = {"v1alpha": "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
              "v1": "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"}
GARBAGE = b"\xff\xff\xff"                   # a field tag with no end: no message parses it
LIST_SERVICES = reflection_pb2.ServerReflectionRequest(list_services="").SerializeToString()
# grpc-core's default soft limit on the metadata a peer receives (random rejection
# from it to the hard limit, 16 KiB), and grpc-java's hard default: 8 KiB,
# counted as HPACK does (RFC 7541 4.1: name + value + 32 per entry)
METADATA_LIMIT = 8 * 1024


def raw_stream(channel: grpc.Channel, method: str):
    return channel.stream_stream(method, request_serializer=lambda b: b, response_deserializer=lambda b: b)


def raw_unary(channel: grpc.Channel, method: str):
    return channel.unary_unary(method, request_serializer=lambda b: b, response_deserializer=lambda b: b)


def stream_failure(call, requests, **kwargs) -> tuple[grpc.StatusCode, list[tuple[str, str]], str, list]:
    """A streaming call that must fail: its code, violations, message, and what it answered first."""
    got = []
    try:
        for response in call(requests, **kwargs):
            got.append(response)
    except grpc.RpcError as e:
        return e.code(), field_violations(e), e.details(), got
    raise AssertionError(f"the call succeeded: {got}")


class Feed:
    """A request stream the test writes to, message by message."""

    def __init__(self) -> None:
        self._queue: queue.Queue[bytes | None] = queue.Queue()

    def send(self, message: bytes) -> None:
        self._queue.put(message)

    def close(self) -> None:
        self._queue.put(None)

    def __iter__(self) -> Iterator[bytes]:
        while (message := self._queue.get()) is not None:
            yield message


def encoded_size(message: str) -> int:
    """Bytes of a status message as grpc-message carries it: UTF-8, percent-encoded
    outside printable ASCII."""
    return sum(1 if 0x20 <= b <= 0x7E and b != 0x25 else 3 for b in message.encode())


def trailer_size(error: grpc.RpcError) -> int:
    """The trailers of a failed call as a peer's metadata limit counts them:
    name + value + 32 per entry, -bin values base64-encoded (as every stack but
    grpc-core to grpc-core sends them), grpc-message percent-encoded."""
    size = len("grpc-status") + 2 + 32
    size += len("grpc-message") + 32 + encoded_size(error.details())
    for key, value in error.trailing_metadata() or ():
        value = base64.b64encode(value) if key.endswith("-bin") else value.encode()
        size += len(key) + len(value) + 32
    return size


def wait_for(condition, seconds: float = 3.0) -> bool:
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


@pytest.fixture(scope="module")
def match():
    return choice_position(min_moves=3)


# --- 1. SIGTERM after undecodable stream messages -----------------------------------

def test_sigterm_stops_after_undecodable_reflection_messages():
    """grpcio (1.85) answers a stream message its deserializer refuses with
    INTERNAL, ends the request stream, and when the handler then returns it
    sends a second status that never completes: server.stop() waited for it
    for ever in about half the calls. Eight such calls, then SIGTERM: the
    server stops within the grace period, exit 0, and each call got
    INVALID_ARGUMENT."""
    p = Process("--grace-seconds", "1", "--warm-presets", "")
    try:
        codes = []
        for i in range(8):
            call = raw_stream(p.channel, REFLECTION["v1alpha" if i % 2 else "v1"])
            codes.append(stream_failure(call, iter([GARBAGE]), timeout=5)[0])
        start = time.monotonic()
        p.proc.send_signal(signal.SIGTERM)
        try:
            status = p.proc.wait(1 + 5)
        except Exception:
            raise AssertionError("no exit 6 s after SIGTERM:\n" + "".join(p.lines)) from None
        assert status == 0 and time.monotonic() - start < 6
        log = "".join(p.lines)
        assert re.search(r"INFO cirulla.server: stopped\n", log), log
        assert "grpcio did not report the server stopped" not in log       # not the fallback's exit
        assert codes == [INVALID] * 8
    finally:
        p.stop()


# --- 2. a stream's undecodable message is bad input -----------------------------------

@pytest.fixture(scope="module")
def server():
    with running(max_concurrent_searches=2, max_threads=1, default_budget_ms=50, grace_seconds=1) as s:
        yield s


@pytest.fixture(scope="module")
def channel(server):
    channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    yield channel
    channel.close()


@pytest.mark.parametrize("version", ["v1", "v1alpha"])
def test_reflection_refuses_undecodable_messages_as_bad_input(channel, version):
    code, violations, message, got = stream_failure(raw_stream(channel, REFLECTION[version]), iter([GARBAGE]),
                                                    timeout=5)
    assert (code, got) == (INVALID, [])
    assert [f for f, _ in violations] == ["request"] and "message 1 of the stream" in violations[0][1]
    assert message.startswith("request: ")
    # a good message answered, then the bad one refused
    code, violations, _, got = stream_failure(raw_stream(channel, REFLECTION[version]),
                                              iter([LIST_SERVICES, GARBAGE]), timeout=5)
    assert code == INVALID and len(got) == 1 and "message 2 of the stream" in violations[0][1]
    services = reflection_pb2.ServerReflectionResponse.FromString(got[0]).list_services_response.service
    assert "cirulla.v1.EngineService" in {s.name for s in services}


@pytest.mark.parametrize("version", ["v1", "v1alpha"])
def test_reflection_answers_decode_whatever_unknown_fields_the_request_held(channel, version):
    """Reflection echoes the request in its answer: 100 unknown groups nested in
    the request (the decoder's limit) were echoed one level deeper, an answer
    that did not decode (found by bench/soak.py)."""
    groups = b"\xbb\x3e" * 100 + b"\xbc\x3e" * 100          # field 999, start group / end group
    request = reflection_pb2.ServerReflectionRequest(file_by_filename="cirulla/v1/game.proto")
    answers = list(raw_stream(channel, REFLECTION[version])(iter([request.SerializeToString() + groups]), timeout=5))
    answer = reflection_pb2.ServerReflectionResponse.FromString(answers[0])
    assert answer.original_request == request and answer.file_descriptor_response.file_descriptor_proto


def test_undecodable_requests_of_every_shape_are_bad_input(channel, caplog):
    caplog.set_level("INFO", logger="cirulla.server")
    for method in ("/cirulla.v1.EngineService/GetHint", "/grpc.health.v1.Health/Check"):
        code, violations, _ = failure(raw_unary(channel, method), GARBAGE, timeout=5)
        assert code == INVALID and violations[0][0] == "request", method
    for method in ("/cirulla.v1.EngineService/StreamHint", "/cirulla.v1.AnalysisService/AnalyzeGame",
                   "/grpc.health.v1.Health/Watch"):
        unary_stream = channel.unary_stream(method, request_serializer=lambda b: b,
                                            response_deserializer=lambda b: b)
        code, violations, _, _ = stream_failure(unary_stream, GARBAGE, timeout=5)
        assert code == INVALID and violations[0][0] == "request", method
    lines = [r.getMessage() for r in caplog.records if r.name == "cirulla.server"]
    assert any(re.match(r"/cirulla.v1.AnalysisService/AnalyzeGame INVALID_ARGUMENT \d", line) for line in lines)


# --- 3. long-lived streams do not take the handler threads ------------------------------

def first(stream, seconds: float = 3.0):
    """The next answer of a stream, which must come within `seconds`."""
    box: list = []

    def read() -> None:
        try:
            box.append(next(stream))
        except grpc.RpcError as e:
            box.append(e)
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(seconds)
    if not box:
        stream.cancel()
        raise AssertionError(f"no answer within {seconds} s")
    if isinstance(box[0], grpc.RpcError):
        raise box[0]
    return box[0]


def _watch(channel: grpc.Channel, service: str = ""):
    """A Watch stream and its first answer."""
    stream = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=service), timeout=30)
    return stream, first(stream).status


def test_watch_streams_leave_the_handler_threads_free(match):
    """Watch needs no token; each open stream used to pin a handler thread."""
    with running(workers=2, token="s3cret", warm_presets="") as s:
        api = stubs(s)
        health = health_pb2_grpc.HealthStub(api.channel)
        streams = []
        try:
            for _ in range(6):                     # three times the handler threads
                stream, status = _watch(api.channel)
                streams.append(stream)
                assert status == SERVING
            assert health.Check(health_pb2.HealthCheckRequest(), timeout=2).status == SERVING
            info = api.engine.GetEngineInfo(epb.GetEngineInfoRequest(), timeout=2,
                                            metadata=[("authorization", "Bearer s3cret")])
            assert info.version
        finally:
            for stream in streams:
                stream.cancel()


def test_watch_streams_past_the_cap_are_refused():
    with running(workers=2, max_watch_streams=3, warm_presets="") as s:
        channel = stubs(s).channel
        health = health_pb2_grpc.HealthStub(channel)
        streams = [_watch(channel)[0] for _ in range(3)]
        try:
            with pytest.raises(grpc.RpcError) as refused:
                _watch(channel)
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "Watch" in refused.value.details()
            assert health.Check(health_pb2.HealthCheckRequest(), timeout=2).status == SERVING
            streams.pop().cancel()                 # a closed stream frees its place
            assert wait_for(lambda: s.calls.open_streams("watch") == 2)
            stream, status = _watch(channel)
            streams.append(stream)
            assert status == SERVING
        finally:
            for stream in streams:
                stream.cancel()


def test_watch_streams_ending_while_statuses_change_do_not_freeze_the_server():
    """grpcio-health-checking's servicer sends to its watchers under its lock;
    a Watch ending meanwhile waits for that lock on grpcio's serve thread, which
    the send waits for: the server froze (grpc/grpc#43403). Streams open and
    end while statuses change; the server answers on, and stops."""
    from cirulla.server.app import build
    from cirulla.server.config import ServerConfig

    s = build(ServerConfig(listen="127.0.0.1:0", warm_presets=""))
    flipping = threading.Event()

    def flip() -> None:
        status = SERVING
        while not flipping.is_set():
            status = NOT_SERVING if status == SERVING else SERVING
            s.health.set("cirulla.v1.RulesService", status)

    def stop() -> bool:
        """Stop the server, in a bounded time (a frozen one is left behind)."""
        stopping = threading.Thread(target=s.shutdown, args=(0.1,), daemon=True)
        stopping.start()
        stopping.join(5)
        return not stopping.is_alive()

    flipper = threading.Thread(target=flip, daemon=True)
    channel = grpc.insecure_channel(f"127.0.0.1:{s.port}")
    health = health_pb2_grpc.HealthStub(channel)
    try:
        flipper.start()
        for _ in range(10):
            streams = [health.Watch(health_pb2.HealthCheckRequest(service="cirulla.v1.RulesService"), timeout=10)
                       for _ in range(10)]
            for stream in streams:
                first(stream)
            for stream in streams:
                stream.cancel()
        assert health.Check(health_pb2.HealthCheckRequest(), timeout=2).status == SERVING
        flipping.set()
        flipper.join(5)
        assert not flipper.is_alive(), "a status change never finished"
        assert wait_for(lambda: s.health.watching() == 0 and s.calls.open_streams("watch") == 0)
        assert stop(), "the shutdown never finished"
    finally:
        flipping.set()
        channel.close()
        stop()


def test_watch_streams_are_logged_at_their_end(caplog):
    caplog.set_level("INFO", logger="cirulla.server")
    with running(max_watch_streams=1, warm_presets="") as s:
        channel = stubs(s).channel
        stream, _ = _watch(channel)
        with pytest.raises(grpc.RpcError):
            _watch(channel)
        stream.cancel()
        assert wait_for(lambda: s.calls.open_streams("watch") == 0)
        failure(raw_unary(channel, "/no.such.Service/Method"), b"", timeout=5)

        def lines() -> list[str]:
            return [r.getMessage() for r in caplog.records if r.name == "cirulla.server"]
        assert wait_for(lambda: sum(line.startswith("/grpc.health.v1.Health/Watch ") for line in lines()) == 2)
        watch = [line.split()[1] for line in lines() if line.startswith("/grpc.health.v1.Health/Watch ")]
        assert sorted(watch) == ["CANCELLED", "RESOURCE_EXHAUSTED"]
        assert "/no.such.Service/Method UNIMPLEMENTED 0.0 ms" in lines()


def test_reflection_streams_past_the_cap_are_refused_and_leave_the_threads_free():
    """A reflection stream holds a handler thread while it is open: a few
    may, on threads of their own; past the cap, RESOURCE_EXHAUSTED."""
    with running(max_concurrent_searches=1, max_waiting_searches=0, max_reflection_streams=2,
                 warm_presets="") as s:
        assert s.config.worker_threads == 1 + 0 + 2 + 8           # searches, waiting, reflection, the rest
        api = stubs(s)
        feeds, streams = [], []
        try:
            for _ in range(2):
                feeds.append(Feed())
                streams.append(raw_stream(api.channel, REFLECTION["v1"])(iter(feeds[-1]), timeout=20))
                feeds[-1].send(LIST_SERVICES)
                assert first(streams[-1])          # open, and answering
            code, _, message, _ = stream_failure(raw_stream(api.channel, REFLECTION["v1alpha"]),
                                                 iter([LIST_SERVICES]), timeout=5)
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "reflection" in message
            # the calls that are not streams still have their handler threads
            answers = [api.engine.GetEngineInfo.future(epb.GetEngineInfoRequest(), timeout=2) for _ in range(8)]
            assert all(a.result().version for a in answers)
            feeds[0].close()
            assert list(streams[0]) == []
            assert wait_for(lambda: s.calls.open_streams("reflection") == 1)
            assert len(list(raw_stream(api.channel, REFLECTION["v1"])(iter([LIST_SERVICES]), timeout=5))) == 1
        finally:
            for stream in streams:
                stream.cancel()


# --- 4. errors stay within what clients accept ---------------------------------------

def test_an_error_echoing_a_huge_card_stays_small(channel, match):
    view = view_msg(match)
    del view.hand[:]
    view.hand.append("X" * 6000)
    api = stubs_of(channel)
    with pytest.raises(grpc.RpcError) as caught:
        api.GetHint(epb.GetHintRequest(view=view), timeout=5)
    e = caught.value
    assert e.code() == INVALID, e.details()
    violations = field_violations(e)
    assert violations and violations[0][0] == "view.hand[0]" and "…" in violations[0][1]
    assert all(len(f) <= 200 and len(d) <= 200 for f, d in violations)
    assert trailer_size(e) < METADATA_LIMIT


@pytest.mark.parametrize("card", ["X" * 300, "é" * 300, "ZZ"], ids=["long", "not-ascii", "unknown"])
def test_an_error_with_a_thousand_bad_cards_stays_small(channel, match, card):
    view = view_msg(match)
    del view.hand[:]
    view.hand.extend([card] * 1000)
    with pytest.raises(grpc.RpcError) as caught:
        stubs_of(channel).GetHint(epb.GetHintRequest(view=view), timeout=5)
    e = caught.value
    assert e.code() == INVALID, e.details()
    violations = field_violations(e)
    assert violations and violations[0][0].startswith("view.")
    assert trailer_size(e) < METADATA_LIMIT
    assert encoded_size(e.details()) <= 1024


def test_the_status_of_a_bad_request_is_bounded():
    from cirulla.server.errors import MAX_DETAILS_BYTES, MAX_TEXT, BadRequest, status_of, to_status

    for text in ("x" * 10_000, "é" * 10_000, "\U0001F0CF" * 10_000):
        error = BadRequest([(f"view.hand[{i}]" + text, text) for i in range(1_000)])
        status = status_of(error)
        assert status.ByteSize() <= MAX_DETAILS_BYTES
        assert encoded_size(to_status(error).details) <= 1024
        assert len(error.violations[0][0]) == len(error.violations[0][1]) == MAX_TEXT
        assert error.violations[0][1].endswith("…")
        assert "(and 999 more" in status.message and "listed" in status.message
    one = status_of(BadRequest.one("budget.time_ms", "-5 is out of range 0..10000"))
    assert one.message == "budget.time_ms: -5 is out of range 0..10000 (JSON: budget.timeMs)"


@pytest.mark.parametrize("message", [
    "a" * 1024,                     # fits to the byte: kept whole
    "a" * 1025,
    "a" * 1022 + "%",               # '%' takes three bytes: 1025
    "%" * 341 + "a",                # 1024: kept whole
    "a" * 1000 + "\x7f" + "b" * 30,  # DEL is not printable: three bytes
    "retry later; " * 100,
    "è" * 200,
    "a" * 1019 + "é",               # six bytes
])
def test_a_status_message_is_cut_where_its_grpc_message_passes_the_limit(message):
    """A message keeps every character that fits in 1024 bytes of grpc-message
    with room for the ellipsis, and only then is cut (the common printable
    ASCII ones checked without walking their characters)."""
    from cirulla.server.errors import ELLIPSIS, MAX_MESSAGE_BYTES, clip_message

    clipped = clip_message(message)
    if encoded_size(message) <= MAX_MESSAGE_BYTES:
        assert clipped == message
    else:
        kept = clipped.removesuffix(ELLIPSIS)
        assert clipped.endswith(ELLIPSIS) and message.startswith(kept)
        assert encoded_size(clipped) <= MAX_MESSAGE_BYTES
        assert encoded_size(message[:len(kept) + 1] + ELLIPSIS) > MAX_MESSAGE_BYTES   # the longest that fits


def test_the_json_name_of_a_field_comes_once_and_within_bounds():
    """A violation gathered into another request's keeps one JSON name; a long
    problem is clipped before it, never the name; the engine's Failure says the same."""
    from cirulla.server.convert import Problems
    from cirulla.server.errors import MAX_TEXT, BadRequest, failure_of

    def check_stock() -> None:
        raise BadRequest.one("view.stock_size", "29, but the history gives 30")

    problems = Problems()
    problems.check(check_stock)
    error = BadRequest(problems.items)
    assert error.violations == [("view.stock_size", "29, but the history gives 30 (JSON: view.stockSize)")]
    failure = failure_of(error).field_violations[0]
    assert (failure.field, failure.description) == error.violations[0]

    _, description = BadRequest.one("view.hand_sizes[1]", "x" * 1000).violations[0]
    assert len(description) == MAX_TEXT and description.endswith("… (JSON: view.handSizes[1])")


def stubs_of(channel: grpc.Channel):
    from cirulla.v1 import engine_service_pb2_grpc
    return engine_service_pb2_grpc.EngineServiceStub(channel)


# --- 5. method names cannot be probed without the token ------------------------------

@pytest.mark.parametrize("method", ["/cirulla.v1.EngineService/Nope", "/no.such.Service/Method",
                                    "/grpc.reflection.v1.ServerReflection/Nope"])
def test_unknown_methods_need_the_token(method):
    with running(token="s3cret", warm_presets="") as s:
        channel = stubs(s).channel
        for metadata in (None, [("authorization", "Bearer wrong")]):
            assert failure(raw_unary(channel, method), b"", metadata=metadata, timeout=5)[0] == \
                grpc.StatusCode.UNAUTHENTICATED
            assert stream_failure(raw_stream(channel, method), iter([b""]), metadata=metadata,
                                  timeout=5)[0] == grpc.StatusCode.UNAUTHENTICATED
        token = [("authorization", "Bearer s3cret")]
        assert failure(raw_unary(channel, method), b"", metadata=token, timeout=5)[0] == \
            grpc.StatusCode.UNIMPLEMENTED
        assert stream_failure(raw_stream(channel, method), iter([b""]), metadata=token, timeout=5)[0] == \
            grpc.StatusCode.UNIMPLEMENTED
        # the health service is open: its unknown methods are unknown to anyone
        assert failure(raw_unary(channel, "/grpc.health.v1.Health/Nope"), b"", timeout=5)[0] == \
            grpc.StatusCode.UNIMPLEMENTED


def test_unknown_methods_without_a_token_configured(channel):
    assert failure(raw_unary(channel, "/no.such.Service/Method"), b"", timeout=5)[0] == \
        grpc.StatusCode.UNIMPLEMENTED


# --- the streaming handlers' documented status codes ---------------------------------

def test_streaming_handlers_answer_their_documented_codes(server, channel, match):
    engine = stubs_of(channel)
    analysis = analysis_service_pb2_grpc.AnalysisServiceStub(channel)
    bad = view_msg(match)
    bad.hand.append("ZZ")
    # StreamHint: bad input, a budget past the caps
    code, violations, _, got = stream_failure(lambda r, **kw: engine.StreamHint(r, **kw),
                                              epb.StreamHintRequest(view=bad), timeout=5)
    assert (code, got) == (INVALID, []) and violations[0][0].startswith("view.hand")
    code, violations, _, _ = stream_failure(lambda r, **kw: engine.StreamHint(r, **kw), epb.StreamHintRequest(
        view=view_msg(match), budget=epb.Budget(threads=9)), timeout=5)
    assert code == INVALID and violations[0][0] == "budget.threads"
    # AnalyzeGame: not a record, iterations past the cap
    code, violations, _, _ = stream_failure(lambda r, **kw: analysis.AnalyzeGame(r, **kw),
                                            apb.AnalyzeGameRequest(iterations=-1, threads=99), timeout=5)
    assert code == INVALID and {"iterations", "threads"} <= {f for f, _ in violations}
    # Watch: an unknown service is SERVICE_UNKNOWN, not an error (grpc.health.v1)
    stream, status = _watch(channel, "no.such.Service")
    stream.cancel()
    assert status == health_pb2.HealthCheckResponse.SERVICE_UNKNOWN
    # the server answers on
    assert [r.final for r in engine.StreamHint(epb.StreamHintRequest(
        view=view_msg(match), budget=epb.Budget(iterations=50)), timeout=10)][-1]


def test_streaming_handlers_need_the_token_but_watch():
    with running(token="s3cret", warm_presets="") as s:
        channel = stubs(s).channel
        match = choice_position()
        engine, analysis = stubs_of(channel), analysis_service_pb2_grpc.AnalysisServiceStub(channel)
        unauthenticated = grpc.StatusCode.UNAUTHENTICATED
        assert stream_failure(lambda r, **kw: engine.StreamHint(r, **kw), epb.StreamHintRequest(
            view=view_msg(match)), timeout=5)[0] == unauthenticated
        assert stream_failure(lambda r, **kw: analysis.AnalyzeGame(r, **kw), apb.AnalyzeGameRequest(),
                              timeout=5)[0] == unauthenticated
        assert stream_failure(raw_stream(channel, REFLECTION["v1"]), iter([LIST_SERVICES]),
                              timeout=5)[0] == unauthenticated
        stream, status = _watch(channel)
        stream.cancel()
        assert status == SERVING


def test_streams_while_shutting_down(match):
    with running(warm_presets="") as s:
        channel = stubs(s).channel
        engine, analysis = stubs_of(channel), analysis_service_pb2_grpc.AnalysisServiceStub(channel)
        watching, _ = _watch(channel)
        s.health.enter_graceful_shutdown()
        s.calls.drain()
        assert first(watching).status == NOT_SERVING          # Watch tells, and stays open
        watching.cancel()
        unavailable = grpc.StatusCode.UNAVAILABLE
        assert stream_failure(lambda r, **kw: engine.StreamHint(r, **kw), epb.StreamHintRequest(
            view=view_msg(match)), timeout=5)[0] == unavailable
        assert stream_failure(lambda r, **kw: analysis.AnalyzeGame(r, **kw), apb.AnalyzeGameRequest(),
                              timeout=5)[0] == unavailable
        # reflection still describes the server
        assert len(list(raw_stream(channel, REFLECTION["v1"])(iter([LIST_SERVICES]), timeout=5))) == 1


# --- SIGTERM after all of the above -------------------------------------------------------

def test_sigterm_after_every_finding(match):
    """One server through every finding above, then SIGTERM: the Watch streams
    hear NOT_SERVING, "stopped" is logged and the exit is 0 within the grace
    period (and the second the answers get to go out)."""
    p = Process("--grace-seconds", "1", "--warm-presets", "", "--max-watch-streams", "3",
                "--max-reflection-streams", "2", env={"CIRULLA_TOKEN": "s3cret"})
    token = [("authorization", "Bearer s3cret")]
    try:
        for _ in range(4):
            assert stream_failure(raw_stream(p.channel, REFLECTION["v1"]), iter([LIST_SERVICES, GARBAGE]),
                                  metadata=token, timeout=5)[0] == INVALID
        watches = [_watch(p.channel) for _ in range(3)]
        assert all(status == SERVING for _, status in watches)
        with pytest.raises(grpc.RpcError) as refused:
            _watch(p.channel)
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        feed = Feed()
        open_reflection = raw_stream(p.channel, REFLECTION["v1alpha"])(iter(feed), metadata=token, timeout=20)
        feed.send(LIST_SERVICES)
        assert first(open_reflection)
        view = view_msg(match)
        view.hand.append("X" * 6000)
        e = failure(p.engine.GetHint, epb.GetHintRequest(view=view), metadata=token, timeout=5)
        assert e[0] == INVALID
        assert failure(raw_unary(p.channel, "/no.such.Service/Method"), b"", timeout=5)[0] == \
            grpc.StatusCode.UNAUTHENTICATED
        start = time.monotonic()
        p.proc.send_signal(signal.SIGTERM)
        heard = [first(stream).status for stream, _ in watches]
        try:
            status = p.proc.wait(1 + 5)
        except Exception:
            raise AssertionError("no exit 6 s after SIGTERM:\n" + "".join(p.lines)) from None
        assert status == 0 and time.monotonic() - start < 6
        assert heard == [NOT_SERVING] * 3
        log = "".join(p.lines)
        assert re.search(r"INFO cirulla.server: stopped\n", log) and "grpcio did not report" not in log, log
        feed.close()
    finally:
        p.stop()


def test_a_server_that_grpc_never_reports_stopped_still_exits():
    """Defence in depth: if grpcio's books never let server.stop() finish
    (finding 1's cause), shutdown gives up after a bounded wait."""
    from cirulla.server import app

    with running(warm_presets="") as s:
        class Stuck:
            def stop(self, grace):
                return threading.Event()           # never set

        real, s.server = s.server, Stuck()
        try:
            done: list[bool] = []
            shutdown = threading.Thread(target=lambda: done.append(s.shutdown(0.1)), daemon=True)
            start = time.monotonic()
            shutdown.start()
            shutdown.join(app.FLUSH_SECONDS + app.STOP_SECONDS + 2)
            assert done == [True] and time.monotonic() - start < app.FLUSH_SECONDS + app.STOP_SECONDS + 1
        finally:
            s.server = real
