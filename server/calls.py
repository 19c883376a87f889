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
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeAlias

import grpc

from .errors import BadRequest, Handler, ServerInterceptor, clip, refusing, to_status

log = logging.getLogger("cirulla.server")

# Long-lived or trivial streams a shutdown need not wait for.
_NOT_WORK = ("/grpc.health.v1.Health/", "/grpc.reflection.")
WATCH = "/grpc.health.v1.Health/Watch"
REFLECTION = "/grpc.reflection."

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

    def __init__(self, *, max_watch_streams: int = 100, max_reflection_streams: int = 4) -> None:
        self._lock = threading.Condition()
        self._in_flight = 0
        self._draining = False
        self._caps = {"watch": StreamCap("Health.Watch", max_watch_streams),
                      "reflection": StreamCap("server reflection", max_reflection_streams)}

    @property
    def in_flight(self) -> int:
        with self._lock:
            return self._in_flight

    def open_streams(self, kind: str) -> int:
        """Streams of a capped kind ("watch", "reflection") open now."""
        return self._caps[kind].open

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no call is in flight; False if the timeout came first."""
        with self._lock:
            return self._lock.wait_for(lambda: self._in_flight == 0, timeout)

    def drain(self) -> None:
        """Refuse new calls (health checks aside) with UNAVAILABLE: shutting down."""
        with self._lock:
            self._draining = True

    def intercept_service(self, continuation: Callable[[grpc.HandlerCallDetails], Handler | None],
                          details: grpc.HandlerCallDetails) -> Handler | None:
        handler = continuation(details)
        method = details.method
        if handler is None:                 # grpcio answers UNIMPLEMENTED at once
            # (the name is the caller's: clipped)
            log.info("%s %s %.1f ms", clip(method), grpc.StatusCode.UNIMPLEMENTED.name, 0.0)
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

    def _start(self, counted: bool) -> float:
        if counted:
            with self._lock:
                self._in_flight += 1
        return time.perf_counter()

    def _end(self, counted: bool, method: str, context: grpc.ServicerContext, start: float, failed: bool) -> None:
        ms = (time.perf_counter() - start) * 1000
        # the code set so far (None: none yet); grpc-stubs 1.53 predates ServicerContext.code()
        code: grpc.StatusCode | None = context.code()      # type: ignore[attr-defined]
        if code is None:
            if not context.is_active():
                code = grpc.StatusCode.CANCELLED
            elif failed:
                code = grpc.StatusCode.UNKNOWN
            else:
                code = grpc.StatusCode.OK
        log.info("%s %s %.1f ms", method, code.name, ms)
        if counted:
            with self._lock:
                self._in_flight -= 1
                self._lock.notify_all()

    def _unary(self, behavior: Behavior, method: str, counted: bool, cap: StreamCap | None,
               request_streaming: bool) -> Behavior:
        def call(request: Any, context: grpc.ServicerContext) -> Any:
            start, failed = self._start(counted), True
            try:
                if request_streaming:
                    request = _checked(request, context)
                else:
                    _refuse_undecodable(request, context)
                response = behavior(request, context)
                failed = False
                return response
            finally:
                self._end(counted, method, context, start, failed)
        return call

    def _streaming(self, behavior: Behavior, method: str, counted: bool, cap: StreamCap | None,
                   request_streaming: bool) -> Behavior:
        def call(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
            start, failed = self._start(counted), True
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
                self._end(counted, method, context, start, failed)
        return call

    def _non_blocking(self, behavior: NonBlocking, method: str, cap: StreamCap | None) -> NonBlocking:
        """A non-blocking behaviour stays one: it returns at once and answers
        through the callback; its log line is written when the call ends."""
        def call(request: Any, context: grpc.ServicerContext, send_response: Callable[[Any], None]) -> None:
            start = time.perf_counter()
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
                    self._end(False, method, context, start, failed)
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
                    self._end(False, method, context, start, True)
                raise

        call.experimental_non_blocking = True                        # type: ignore[attr-defined]
        call.experimental_thread_pool = getattr(behavior, "experimental_thread_pool", None)  # type: ignore[attr-defined]
        return call


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
