"""One log line per call (method, status, time), and the count of calls in
flight that a graceful shutdown waits for."""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeAlias

import grpc

from .errors import BadRequest, Handler, ServerInterceptor, refusing, to_status

log = logging.getLogger("cirulla.server")

# Long-lived or trivial streams a shutdown need not wait for.
_NOT_WORK = ("/grpc.health.v1.Health/", "/grpc.reflection.")

# a method's behaviour, of any shape: (the request, or the client's stream of
# them; the context) -> the response, or the stream of them
Behavior: TypeAlias = Callable[[Any, grpc.ServicerContext], Any]


class CallLog(ServerInterceptor):
    """The outermost interceptor: it sees every call, refused ones included."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._in_flight = 0
        self._draining = False

    @property
    def in_flight(self) -> int:
        with self._lock:
            return self._in_flight

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
        if handler is None:
            return None
        method = details.method
        counted = not method.startswith(_NOT_WORK)
        if counted and self._draining:
            handler = refusing(handler, grpc.StatusCode.UNAVAILABLE, "the server is shutting down")
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
        if deserializer is not None and not handler.request_streaming:
            deserializer = _lenient(deserializer)
        return factory(wrap(behavior, method, counted), request_deserializer=deserializer,
                       response_serializer=handler.response_serializer)

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
            if failed:
                code = grpc.StatusCode.UNKNOWN
            elif not context.is_active():
                code = grpc.StatusCode.CANCELLED
            else:
                code = grpc.StatusCode.OK
        log.info("%s %s %.1f ms", method, code.name, ms)
        if counted:
            with self._lock:
                self._in_flight -= 1
                self._lock.notify_all()

    def _unary(self, behavior: Behavior, method: str, counted: bool) -> Behavior:
        def call(request: Any, context: grpc.ServicerContext) -> Any:
            start, failed = self._start(counted), True
            try:
                _refuse_undecodable(request, context)
                response = behavior(request, context)
                failed = False
                return response
            finally:
                self._end(counted, method, context, start, failed)
        return call

    def _streaming(self, behavior: Behavior, method: str, counted: bool) -> Behavior:
        def call(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
            start, failed = self._start(counted), True
            try:
                _refuse_undecodable(request, context)
                yield from behavior(request, context)
                failed = False
            except GeneratorExit:           # the client went away mid-stream
                failed = False
                raise
            finally:
                self._end(counted, method, context, start, failed)
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
