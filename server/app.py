"""The cirulla.v1 server: build it, serve it, stop it gracefully.

`cirulla-server` (main) reads flags and CIRULLA_* variables, serves until
SIGTERM or SIGINT, then: health NOT_SERVING; if clients watch health, it
serves on for the lame-duck time while they route around it; then new calls
are refused with UNAVAILABLE (a client's retry policy sends them to another
replica), calls in flight are given the rest of the grace period to finish,
those left are cancelled, and exit 0. The exit does not hang on grpcio: its
server.stop() waits until every call has left grpcio's books, and a call that
never does (grpcio's second status after a request stream it could not decode:
see calls.py) would keep it waiting for ever; shutdown waits for it a bounded
time (STOP_SECONDS, and never past the deadline below).

Nor does it hang on a handler that ignores cancellation (stuck in a loop that
never looks: a defect): whatever still runs OVERRUN_SECONDS (0.3 s) past the
grace is abandoned, named in an ERROR line (each call's method, request id and
where its thread is), and the process ends at once with status 70 (ABANDONED,
EX_SOFTWARE: see stopping.py). A stop ends within the grace plus 0.3 s; if
nothing is left running then (the stop itself was slow), a WARNING, and 0.

Exit statuses: 0 stopped cleanly, 1 cannot start (a port in use, unreadable
certificates), 2 bad flags or variables, 70 stopped by abandoning work.
"""
from __future__ import annotations

import logging
import signal
import sys
import threading
import time
from collections.abc import Sequence
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2

from cirulla.v1 import (
    analysis_service_pb2,
    analysis_service_pb2_grpc,
    engine_service_pb2,
    engine_service_pb2_grpc,
    rules_service_pb2,
    rules_service_pb2_grpc,
)

from .auth import BearerTokenInterceptor
from .calls import CallLog, formatter
from .config import ServerConfig, parse_config, unknown_variables
from .errors import ServerInterceptor
from .health import HealthServicer
from .metrics import Metrics, MetricsServer
from .service import Service, return_large_blocks_when_freed
from .servicers import AnalysisServicer, EngineServicer, RulesServicer
from .stopping import OVERRUN_SECONDS, StopDeadline

log = logging.getLogger("cirulla.server")

FLUSH_SECONDS = 1.0         # once the handlers are done, the most their answers get to go out ...
MIN_FLUSH_SECONDS = 0.1     # ... within the grace, but at least this (well within the stop's OVERRUN_SECONDS)
STOP_SECONDS = 3.0          # after the flush, how long grpcio gets to report the server stopped
SERVICES = (engine_service_pb2.DESCRIPTOR.services_by_name["EngineService"].full_name,
            rules_service_pb2.DESCRIPTOR.services_by_name["RulesService"].full_name,
            analysis_service_pb2.DESCRIPTOR.services_by_name["AnalysisService"].full_name)
# Reflection v1 has v1alpha's messages under another package name, so v1alpha's
# servicer answers both (grpcio-reflection ships only v1alpha).
REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"
# every service served, for reflection to list and the metrics to label
SERVED = (*SERVICES, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME,
          REFLECTION_V1)


@dataclass
class Running:
    """A started server and the parts a shutdown (or a test) needs."""
    server: grpc.Server
    port: int
    config: ServerConfig
    health: HealthServicer
    calls: CallLog
    service: Service
    metrics: Metrics
    metrics_server: MetricsServer | None      # None: --metrics-listen not set

    @property
    def address(self) -> str:
        return f"{self.config.listen.rpartition(':')[0]}:{self.port}"

    @property
    def metrics_address(self) -> str | None:
        if self.config.metrics_listen is None or self.metrics_server is None:
            return None
        return f"{self.config.metrics_listen.rpartition(':')[0]}:{self.metrics_server.port}"

    def shutdown(self, grace: float | None = None) -> bool:
        """NOT_SERVING, the lame-duck time if clients watch health, then no new
        calls; those in flight finish within the grace period, what is left is
        cancelled. True if nothing had to be cancelled."""
        grace = self.config.grace_seconds if grace is None else grace
        grace_ends = time.monotonic() + grace
        self.health.enter_graceful_shutdown()
        if self.health.watching():
            # Clients that watch health take this replica out of their round_robin as soon as
            # they hear NOT_SERVING; until then, serve what they send. grpcio's stop() ends
            # calls it has taken in but not handed over with CANCELLED (grpc/grpc#41785):
            # only calls that no longer come are safe from it.
            time.sleep(min(self.config.lame_duck_ms / 1000, grace))
        self.calls.drain()
        idle = self.calls.wait_idle(max(grace_ends - time.monotonic(), 0))
        # idle: the handlers are done, a moment lets their answers go out (long-lived streams,
        # Watch and reflection, hold it all: it ends with the grace); else cancel now
        # (grace 0, not None: stop(None) would wait for grpcio's books itself, unbounded)
        flush = min(FLUSH_SECONDS, max(grace_ends - time.monotonic(), MIN_FLUSH_SECONDS)) if idle else 0
        stopped = self.server.stop(grace=flush).wait(flush + STOP_SECONDS)
        if not stopped:
            log.warning("grpcio did not report the server stopped %.1f s after the calls were cancelled; "
                        "going on without it", STOP_SECONDS)
        if self.metrics_server is not None:         # last: scrapes see the drain
            self.metrics_server.close()
        return idle


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise ValueError(f"cannot read the {what} {path}: {e.strerror}") from None


def build(config: ServerConfig) -> Running:
    """A started server; listen on port 0 for a free port (see Running.port)."""
    metrics = Metrics(_served_methods())
    calls = CallLog(max_watch_streams=config.max_watch_streams, max_reflection_streams=config.max_reflection_streams,
                    metrics=metrics)
    interceptors: list[ServerInterceptor] = [calls]                  # outermost: it logs refused calls too
    if config.token:
        interceptors.append(BearerTokenInterceptor(config.token))
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=config.worker_threads, thread_name_prefix="cirulla-rpc"),
        interceptors=interceptors,
        # a bounded queue, then RESOURCE_EXHAUSTED (refused by grpcio before any handler runs; non-blocking
        # Watch streams hold no place in it once they have started)
        maximum_concurrent_rpcs=config.worker_threads * 4,
        options=[("grpc.max_receive_message_length", config.max_message_bytes),
                 ("grpc.max_send_message_length", config.max_message_bytes),
                 ("grpc.so_reuseport", 0),       # a port in use is an error, not a shared port
                 *_connection_age(config)])
    service = Service(config, metrics)
    metrics.watch(service.limits.slots)
    service.warm_up(config.presets_to_warm)
    engine_service_pb2_grpc.add_EngineServiceServicer_to_server(EngineServicer(service), server)
    rules_service_pb2_grpc.add_RulesServiceServicer_to_server(RulesServicer(service), server)
    analysis_service_pb2_grpc.add_AnalysisServiceServicer_to_server(AnalysisServicer(service), server)
    health_servicer = HealthServicer()     # its Watch holds no thread while open (see health.py)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    _add_reflection(server)
    if config.tls_cert is not None and config.tls_key is not None:     # (config.tls: both, or neither)
        client_ca = _read(config.tls_client_ca, "client CA") if config.tls_client_ca else None
        credentials = grpc.ssl_server_credentials(
            [(_read(config.tls_key, "TLS key"), _read(config.tls_cert, "TLS certificate"))],
            root_certificates=client_ca, require_client_auth=client_ca is not None)
        port = server.add_secure_port(config.listen, credentials)
    else:
        port = server.add_insecure_port(config.listen)
    try:
        metrics_server = None if config.metrics_listen is None else metrics.serve(config.metrics_listen)
    except RuntimeError:
        server.stop(None)                   # (not started: nothing to wait for)
        raise
    server.start()
    for name in ("", *SERVICES):
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return Running(server, port, config, health_servicer, calls, service, metrics, metrics_server)


def _connection_age(config: ServerConfig) -> list[tuple[str, int]]:
    """grpcio's options for the connection age (0: left out, grpcio's default: none)."""
    return [(option, value) for option, value in (("grpc.max_connection_age_ms", config.max_connection_age_ms),
                                                  ("grpc.max_connection_age_grace_ms",
                                                   config.max_connection_age_grace_ms)) if value]


def _served_methods() -> list[str]:
    """The full name of every method served: /package.Service/Method."""
    _describe_reflection_v1()
    pool = descriptor_pool.Default()
    return [f"/{name}/{method.name}" for name in SERVED for method in pool.FindServiceByName(name).methods]


def _add_reflection(server: grpc.Server) -> None:
    """Server reflection, v1 and v1alpha, listing every service."""
    _describe_reflection_v1()
    servicer = reflection.ReflectionServicer(SERVED)
    for service_name in (reflection.SERVICE_NAME, REFLECTION_V1):
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service_name, {
            "ServerReflectionInfo": grpc.stream_stream_rpc_method_handler(
                servicer.ServerReflectionInfo,
                request_deserializer=_known_fields_only,
                response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString)}),))


def _known_fields_only(data: bytes) -> reflection_pb2.ServerReflectionRequest:
    """A reflection request without the fields its schema does not know: the
    servicer echoes the request in its answer (original_request), and unknown
    groups nested to the decoder's limit would nest one deeper there, in an
    answer no client could decode."""
    request = reflection_pb2.ServerReflectionRequest.FromString(data)
    request.DiscardUnknownFields()
    return request


def _describe_reflection_v1() -> None:
    """Put grpc/reflection/v1/reflection.proto in the descriptor pool (v1alpha's
    file under v1's package), so that reflection can describe itself in v1 too."""
    pool = descriptor_pool.Default()
    name = "grpc/reflection/v1/reflection.proto"
    try:
        pool.FindFileByName(name)
        return
    except KeyError:
        pass
    old, new = reflection_pb2.DESCRIPTOR.package, REFLECTION_V1.rpartition(".")[0]
    file = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(file)
    file.name, file.package = name, new
    for message in file.message_type:
        for field in message.field:
            if field.HasField("type_name"):
                field.type_name = field.type_name.replace(f".{old}.", f".{new}.")
    for method in file.service[0].method:
        method.input_type = method.input_type.replace(f".{old}.", f".{new}.")
        method.output_type = method.output_type.replace(f".{old}.", f".{new}.")
    pool.Add(file)


def serve(config: ServerConfig) -> int:
    """Serve until SIGTERM or SIGINT; the exit status. The process's own: after a
    stop, its deadline stays armed for the interpreter's exit."""
    return_large_blocks_when_freed()
    for var in unknown_variables():
        log.warning("%s is not a setting of the server (cirulla-server --help): ignored", var)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, frame: stop.set())
    try:
        running = build(config)
    except (ValueError, RuntimeError) as e:     # unreadable certificates, a port in use
        log.error("cannot start: %s", e)
        return 1
    if running.metrics_address is not None:      # (before "listening": who waits for that finds both)
        log.info("metrics on http://%s/metrics", running.metrics_address)
    log.info("cirulla.v1 listening on %s (%s%s)", running.address, "TLS" if config.tls else "plaintext",
             ", bearer token required" if config.token else "")
    host = config.listen.rpartition(":")[0].strip("[]")
    if host not in ("127.0.0.1", "localhost", "::1") and not (config.token and config.tls):
        log.warning("listening beyond this machine without %s: anyone who can reach %s can use it",
                    "a token and TLS" if not config.token and not config.tls else
                    "a token" if not config.token else "TLS (the token travels in clear)", running.address)
    while not stop.wait(0.5):
        pass
    deadline = StopDeadline(config.grace_seconds + OVERRUN_SECONDS, running.calls.unfinished, ("call", "calls"), log)
    log.info("stopping: NOT_SERVING, %d call(s) in flight, %.1f s grace", running.calls.in_flight,
             config.grace_seconds)
    finished = running.shutdown()
    # Cancelled handlers return as soon as they look; one that never does must not hold the
    # exit (interpreter exit joins the handler threads): the deadline abandons it.
    if not running.calls.wait_idle(deadline.remaining()):
        deadline.abandon()
    log.info("stopped%s", "" if finished else " (calls still in flight at the end of the grace period were cancelled)")
    return 0


def main(argv: Sequence[str] | None = None) -> None:
    """The `cirulla-server` command."""
    config = parse_config(argv)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter(config.log_format))
    logging.basicConfig(level=config.log_level.upper(), handlers=[handler])
    sys.exit(serve(config))


if __name__ == "__main__":
    main()
