"""One log line per call (method, status, time), the count of calls in
flight that a graceful shutdown waits for, and the caps on long-lived streams.

Requests are decoded leniently: bytes that are not the request message, as
a unary request or as any message of a request stream, get INVALID_ARGUMENT
with a google.rpc.BadRequest naming `request`, never grpcio's INTERNAL. (For
a request stream grpcio's own refusal is worse than a wrong code: it ends the
stream as if the client had, so the handler returns and grpcio sends a second
status that never completes; that call then never leaves grpcio's books and
server.stop() waits for it for ever.)

Long-lived streams that anyone may open are capped, past the cap
RESOURCE_EXHAUSTED:
- grpc.health.v1.Health/Watch (open without a token): at most
  `max_watch_streams` at once. Watch is non-blocking (it holds no handler
  thread while open) and stays so here: its handler is passed through,
  counted and logged at its end.
- server reflection (ServerReflectionInfo, v1 and v1alpha): each open stream
  holds a handler thread, so at most `max_reflection_streams` at once (the
  config adds as many threads to the pool: see ServerConfig.worker_threads).

Each call has a request id, the client's (metadata `x-request-id`) or one
made up, sent back in the trailers and written in the call's log line, so
that a client can find its call in the log. A call's line carries its fields
(method, status, ms, peer, request_id) in the record's `call`: the json
format writes them as fields, the text one as
`/cirulla.v1.EngineService/GetHint OK 103.2 ms request_id=...`.
"""
from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeAlias

import grpc

from .errors import BadRequest, Handler, ServerInterceptor, clip, refusing, to_status
from .metrics import Metrics
from .stopping import Unfinished

log = logging.getLogger("cirulla.server")

# Long-lived or trivial streams a shutdown need not wait for.
_NOT_WORK = ("/grpc.health.v1.Health/", "/grpc.reflection.")
WATCH = "/grpc.health.v1.Health/Watch"
REFLECTION = "/grpc.reflection."
REQUEST_ID = "x-request-id"
# a client's request id is cut to this (not with an ellipsis: metadata is ASCII)
MAX_REQUEST_ID = 128
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

# a method's behaviour, of any shape: (the request, or the client's stream of
# them; the context) -> the response, or the stream of them
Behavior: TypeAlias = Callable[[Any, grpc.ServicerContext], Any]
# a non-blocking one (grpcio's experimental_non_blocking): it answers through the callback
NonBlocking: TypeAlias = Callable[[Any, grpc.ServicerContext, Callable[[Any], None]], None]


class StreamCap:
    """Streams of one kind open at once, against a cap."""

    def __init__(self, name: str, cap: int):
        self.name = name
        self.cap = cap
        self.open = 0
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            if self.open >= self.cap:
                return False
            self.open += 1
            return True

    def give_back(self) -> None:
        with self._lock:
            self.open -= 1

    def once(self) -> Callable[[], None]:
        """A give_back() that acts once however often it is called (a call's end
        can be seen twice: its callback, and its handler's finally)."""
        given = threading.Event()

        def give() -> None:
            if not given.is_set():
                given.set()
                self.give_back()
        return give

    def refuse(self, context: grpc.ServicerContext) -> None:
        context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                      f"{self.cap} {self.name} streams are open, the most this server allows: retry later")


class CallLog(ServerInterceptor):
    """The outermost interceptor: it sees every call, refused ones included."""

    def __init__(self, *, max_watch_streams: int = 100, max_reflection_streams: int = 4,
                 metrics: Metrics | None = None) -> None:
        self._metrics = metrics if metrics is not None else Metrics()
        self._lock = threading.Condition()
        self._in_flight: set[_Started] = set()         # the calls a shutdown waits for
        self._draining = False
        self._caps = {"watch": StreamCap("Health.Watch", max_watch_streams),
                      "reflection": StreamCap("server reflection", max_reflection_streams)}

    @property
    def in_flight(self) -> int:
        with self._lock:
            return len(self._in_flight)

    def unfinished(self) -> list[Unfinished]:
        """The calls in flight, oldest first: what a stop that cannot wait for them abandons."""
        now = time.perf_counter()
        with self._lock:
            started = sorted(self._in_flight, key=lambda call: call.at)
        return [Unfinished(f"{call.method} request_id={call.request_id}", now - call.at, call.thread)
                for call in started]

    def open_streams(self, kind: str) -> int:
        """Streams of a capped kind ("watch", "reflection") open now."""
        return self._caps[kind].open

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no call is in flight; False if the timeout came first."""
        with self._lock:
            return self._lock.wait_for(lambda: not self._in_flight, timeout)

    def drain(self) -> None:
        """Refuse new calls (health checks aside) with UNAVAILABLE: shutting down."""
        with self._lock:
            self._draining = True

    def intercept_service(self, continuation: Callable[[grpc.HandlerCallDetails], Handler | None],
                          details: grpc.HandlerCallDetails) -> Handler | None:
        handler = continuation(details)
        method = details.method
        if handler is None:                 # grpcio answers UNIMPLEMENTED at once
            self._record(method, grpc.StatusCode.UNIMPLEMENTED, 0.0, None,
                         request_id(details.invocation_metadata))
            return None
        counted = not method.startswith(_NOT_WORK)
        if counted and self._draining:
            handler = refusing(handler, grpc.StatusCode.UNAVAILABLE, "the server is shutting down")
        cap = self._caps["watch"] if method == WATCH else \
            self._caps["reflection"] if method.startswith(REFLECTION) else None
        behavior: Behavior | None
        if handler.response_streaming:
            wrap, factory = self._streaming, (grpc.stream_stream_rpc_method_handler
                                              if handler.request_streaming else
                                              grpc.unary_stream_rpc_method_handler)
            behavior = handler.stream_stream or handler.unary_stream
        else:
            wrap, factory = self._unary, (grpc.stream_unary_rpc_method_handler
                                          if handler.request_streaming else
                                          grpc.unary_unary_rpc_method_handler)
            behavior = handler.stream_unary or handler.unary_unary
        if behavior is None:                # a handler has the behaviour of its shape
            raise ValueError(f"{method}: the handler has no behaviour")
        deserializer = handler.request_deserializer
        if deserializer is not None:
            deserializer = _lenient(deserializer)
        if getattr(behavior, "experimental_non_blocking", False):
            # grpcio calls it with a third argument, the callback: not a shape grpc-stubs knows
            non_blocking: NonBlocking = behavior        # type: ignore[assignment]
            wrapped: Any = self._non_blocking(non_blocking, method, cap)
        else:
            wrapped = wrap(behavior, method, counted, cap, handler.request_streaming)
        return factory(wrapped, request_deserializer=deserializer, response_serializer=handler.response_serializer)

    def _start(self, counted: bool, method: str, context: grpc.ServicerContext) -> _Started:
        started = _Started(method, request_id(context.invocation_metadata()), time.perf_counter(),
                           threading.get_ident())
        if counted:
            with self._lock:
                self._in_flight.add(started)
        _echo(context, started.request_id)
        return started

    def _end(self, counted: bool, context: grpc.ServicerContext, started: _Started, failed: bool) -> None:
        ms = (time.perf_counter() - started.at) * 1000
        # the code set so far (None: none yet); grpc-stubs 1.53 predates ServicerContext.code()
        code: grpc.StatusCode | None = context.code()      # type: ignore[attr-defined]
        if code is None:
            if not context.is_active():
                code = grpc.StatusCode.CANCELLED
            elif failed:
                code = grpc.StatusCode.UNKNOWN
            else:
                code = grpc.StatusCode.OK
        _echo(context, started.request_id)      # again: abort_with_status replaces the trailers
        self._record(started.method, code, ms, context.peer(), started.request_id)
        if counted:
            with self._lock:
                self._in_flight.discard(started)
                self._lock.notify_all()

    def _record(self, method: str, code: grpc.StatusCode, ms: float, peer: str | None, request: str) -> None:
        """The call's log line and metrics (a method may be a caller's made-up name: clipped)."""
        method = clip(method)
        log.info("%s %s %.1f ms", method, code.name, ms, extra={"call": {
            "method": method, "status": code.name, "ms": round(ms, 1), "peer": peer, "request_id": request}})
        self._metrics.call_ended(method, code, ms / 1000)

    def _unary(self, behavior: Behavior, method: str, counted: bool, cap: StreamCap | None,
               request_streaming: bool) -> Behavior:
        def call(request: Any, context: grpc.ServicerContext) -> Any:
            started, failed = self._start(counted, method, context), True
            try:
                if request_streaming:
                    request = _checked(request, context)
                else:
                    _refuse_undecodable(request, context)
                response = behavior(request, context)
                failed = False
                return response
            finally:
                self._end(counted, context, started, failed)
        return call

    def _streaming(self, behavior: Behavior, method: str, counted: bool, cap: StreamCap | None,
                   request_streaming: bool) -> Behavior:
        def call(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
            started, failed = self._start(counted, method, context), True
            give_back = None
            try:
                if request_streaming:
                    request = _checked(request, context)
                else:
                    _refuse_undecodable(request, context)
                if cap is not None:
                    if not cap.take():
                        cap.refuse(context)
                    give_back = cap.once()
                    if not context.add_callback(give_back):     # the call has ended already
                        give_back()
                yield from behavior(request, context)
                failed = False
            except GeneratorExit:           # the client went away mid-stream
                failed = False
                raise
            finally:
                if give_back is not None:
                    give_back()
                self._end(counted, context, started, failed)
        return call

    def _non_blocking(self, behavior: NonBlocking, method: str, cap: StreamCap | None) -> NonBlocking:
        """A non-blocking behaviour stays one: it returns at once and answers
        through the callback; its log line is written when the call ends."""
        def call(request: Any, context: grpc.ServicerContext, send_response: Callable[[Any], None]) -> None:
            started = self._start(False, method, context)
            failed, logged_at_end = True, False
            give_back: Callable[[], None] | None = None
            try:
                _refuse_undecodable(request, context)
                if cap is not None:
                    if not cap.take():
                        cap.refuse(context)
                    give_back = cap.once()

                def ended() -> None:
                    if give_back is not None:
                        give_back()
                    self._end(False, context, started, failed)
                logged_at_end = context.add_callback(ended)
                if not logged_at_end:       # the call has ended already
                    ended()
                    return
                behavior(request, context, send_response)
                failed = False
            except BaseException:
                if not logged_at_end:       # refused before the end's callback was set
                    if give_back is not None:
                        give_back()
                    self._end(False, context, started, True)
                raise

        call.experimental_non_blocking = True                        # type: ignore[attr-defined]
        call.experimental_thread_pool = getattr(behavior, "experimental_thread_pool", None)  # type: ignore[attr-defined]
        return call


@dataclass(frozen=True, eq=False)        # each call is itself, however alike two are
class _Started:
    method: str
    request_id: str
    at: float                       # time.perf_counter()
    thread: int                     # the handler's threading.get_ident()


def request_id(metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
    """The call's x-request-id (cut to MAX_REQUEST_ID), or a new one if it has
    none fit for a log line (printable ASCII)."""
    for key, value in metadata or ():
        if key == REQUEST_ID and isinstance(value, str) and value and value.isascii() and value.isprintable():
            return value[:MAX_REQUEST_ID]
    return uuid.uuid4().hex


def _echo(context: grpc.ServicerContext, request: str) -> None:
    """Send the request id back in the trailers, once, with the others."""
    trailers = tuple(context.trailing_metadata() or ())
    if (REQUEST_ID, request) not in trailers:
        context.set_trailing_metadata((*trailers, (REQUEST_ID, request)))


class TextFormatter(logging.Formatter):
    """TEXT_FORMAT, a call's line ending with its request id."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        call = getattr(record, "call", None)
        return line if call is None else f"{line} request_id={call['request_id']}"


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, a call's fields,
    and a traceback as one string."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname, "logger": record.name, "message": record.getMessage(),
            **getattr(record, "call", {})}
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line)


def formatter(log_format: str) -> logging.Formatter:
    """The formatter of a config's log_format ("text" or "json")."""
    return JsonFormatter() if log_format == "json" else TextFormatter()


class _Undecodable:
    """A request whose bytes are not the message (gRPC would answer INTERNAL)."""

    def __init__(self, problem: str):
        self.problem = problem


def _lenient(deserialize: Callable[[bytes], object]) -> Callable[[bytes], object]:
    def parse(data: bytes) -> object:
        try:
            return deserialize(data)
        except Exception as e:              # noqa: BLE001 - DecodeError and kin
            return _Undecodable(str(e))
    return parse


def _refuse_undecodable(request: object, context: grpc.ServicerContext) -> None:
    """Bytes that do not parse are bad input: INVALID_ARGUMENT, not INTERNAL."""
    if isinstance(request, _Undecodable):
        context.abort_with_status(to_status(BadRequest.one("request", request.problem)))


def _checked(requests: Iterable[object], context: grpc.ServicerContext) -> Iterator[object]:
    """A request stream whose first undecodable message ends the call with INVALID_ARGUMENT."""
    for number, request in enumerate(requests, 1):
        if isinstance(request, _Undecodable):
            context.abort_with_status(to_status(BadRequest.one(
                "request", f"message {number} of the stream: {request.problem}")))
        yield request
