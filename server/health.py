"""grpc.health.v1 (Check and Watch) with a Watch that holds no handler
thread while open and cannot deadlock the server.

grpcio-health-checking's HealthServicer (experimental_non_blocking=True)
sends to the watchers while it holds its lock, and a send waits for grpcio's
serve thread to report it done; a Watch that ends meanwhile runs its close
callback on that serve thread, which waits for the same lock: the server
stops answering (grpc/grpc#43403 describes it). Here nothing waits for grpcio
while it holds the lock: a status change is recorded under the lock, then
sent to each watcher outside it, one send at a time per watcher and always
its service's latest status, so a watcher hears the changes in order.
"""
from __future__ import annotations

import threading
from collections.abc import Callable

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health_pb2 import HealthCheckResponse

SERVICE_NAME: str = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name


class _Watcher:
    def __init__(self, service: str, send: Callable[[HealthCheckResponse], None]):
        self.service = service
        self.send = send
        self.sending = threading.Lock()     # one send at a time, in order
        self.last: int | None = None        # the status it was last sent
        self.closed = False


class HealthServicer(health_pb2_grpc.HealthServicer):  # type: ignore[misc]   # (grpc's generated base is untyped)
    def __init__(self) -> None:
        self._lock = threading.Lock()       # never held while sending
        self._status: dict[str, int] = {"": HealthCheckResponse.SERVING}
        self._watchers: dict[str, set[_Watcher]] = {}
        self._shutting_down = False

    def Check(self, request: health_pb2.HealthCheckRequest,
              context: grpc.ServicerContext) -> HealthCheckResponse:
        with self._lock:
            status = self._status.get(request.service)
        if status is None:                  # (the name is not echoed: it could be any size)
            context.set_code(grpc.StatusCode.NOT_FOUND)
            return HealthCheckResponse()
        return HealthCheckResponse(status=status)

    def Watch(self, request: health_pb2.HealthCheckRequest, context: grpc.ServicerContext,
              send_response_callback: Callable[[HealthCheckResponse], None]) -> None:
        """The service's status now and at every change, until the call ends; an
        unknown service is SERVICE_UNKNOWN until it becomes known. Non-blocking:
        grpcio calls it with the callback that sends a response, and it returns."""
        watcher = _Watcher(request.service, send_response_callback)
        with self._lock:
            self._watchers.setdefault(watcher.service, set()).add(watcher)
        if not context.add_callback(lambda: self._forget(watcher)):     # the call has ended already
            self._forget(watcher)
            return
        self._notify(watcher)

    Watch.experimental_non_blocking = True      # type: ignore[attr-defined]
    Watch.experimental_thread_pool = None       # type: ignore[attr-defined]

    def set(self, service: str, status: int) -> None:
        """Set a service's status and tell its watchers (ignored once shutting down)."""
        with self._lock:
            if self._shutting_down:
                return
            self._status[service] = status
            watchers = list(self._watchers.get(service, ()))
        for watcher in watchers:
            self._notify(watcher)

    def enter_graceful_shutdown(self) -> None:
        """Every service NOT_SERVING for good, and every watcher told."""
        with self._lock:
            if self._shutting_down:
                return
            self._shutting_down = True
            for service in self._status:
                self._status[service] = HealthCheckResponse.NOT_SERVING
            watchers = [w for ws in self._watchers.values() for w in ws]
        for watcher in watchers:
            self._notify(watcher)

    def watching(self) -> int:
        """Watch streams open now."""
        with self._lock:
            return sum(len(ws) for ws in self._watchers.values())

    def _notify(self, watcher: _Watcher) -> None:
        """Send the watcher its service's status, unless it had it last. The
        send waits for grpcio (while the call lasts); the lock is not held."""
        with watcher.sending:
            with self._lock:
                if watcher.closed:
                    return
                status = self._status.get(watcher.service, HealthCheckResponse.SERVICE_UNKNOWN)
            if status != watcher.last:
                watcher.last = status
                watcher.send(HealthCheckResponse(status=status))

    def _forget(self, watcher: _Watcher) -> None:
        """The call has ended (run on grpcio's serve thread: it must not wait
        for a send, and takes only the lock no sender holds)."""
        with self._lock:
            watcher.closed = True
            watchers = self._watchers.get(watcher.service)
            if watchers is not None:
                watchers.discard(watcher)
                if not watchers:
                    del self._watchers[watcher.service]
