"""`--server HOST:PORT`: the cirulla.v1 service instead of the local engine.

Errors come back as CliError with the command line's exit codes: a server
that cannot be reached, a request the server calls invalid (with its field
violations), or any other failure.
"""
from __future__ import annotations

import os
from pathlib import Path

import grpc

from cirulla.server.errors import field_violations
from cirulla.v1 import analysis_service_pb2_grpc, engine_service_pb2_grpc

CONNECT_SECONDS = float(os.environ.get("CIRULLA_CONNECT_SECONDS", "5"))   # to wait for a server

# exit codes (also in `cirulla --help`)
OK, FAILED, USAGE, BAD_INPUT, UNREACHABLE, NO_FILE = 0, 1, 2, 3, 4, 5


class CliError(Exception):
    """A failure the command line reports in one line, with its exit code."""

    def __init__(self, message: str, code: int = BAD_INPUT):
        super().__init__(message)
        self.code = code


class Remote:
    """Stubs on a channel to a running server, checked reachable."""

    def __init__(self, target: str, *, token: str | None = None, tls_ca: str | None = None):
        self.target = target
        host, sep, port = target.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise CliError(f"--server must be HOST:PORT, got {target!r}", USAGE)
        if tls_ca:
            try:
                ca = Path(tls_ca).read_bytes()
            except OSError as e:
                raise CliError(f"cannot read the CA certificate {tls_ca}: {e.strerror}", NO_FILE) from None
            self.channel = grpc.secure_channel(target, grpc.ssl_channel_credentials(ca))
        else:
            self.channel = grpc.insecure_channel(target)
        token = token or os.environ.get("CIRULLA_TOKEN")
        self.metadata = [("authorization", f"Bearer {token}")] if token else None
        try:
            grpc.channel_ready_future(self.channel).result(timeout=CONNECT_SECONDS)
        except grpc.FutureTimeoutError:
            self.channel.close()
            raise CliError(f"cannot reach the server at {target} (no answer within "
                           f"{CONNECT_SECONDS:g} s): is `cirulla serve` running there?", UNREACHABLE) from None
        self.engine = engine_service_pb2_grpc.EngineServiceStub(self.channel)
        self.analysis = analysis_service_pb2_grpc.AnalysisServiceStub(self.channel)

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> "Remote":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def rpc_error(e: grpc.RpcError, target: str) -> CliError:
    """A failed call as a one-line error with its exit code."""
    code = e.code()
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return CliError(f"the server at {target} stopped answering: {e.details()}", UNREACHABLE)
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        problems = field_violations(e)
        if problems:
            return CliError("the server refused the request: " +
                            "; ".join(f"{field}: {why}" for field, why in problems), BAD_INPUT)
        return CliError(f"the server refused the request: {e.details()}", BAD_INPUT)
    if code == grpc.StatusCode.UNAUTHENTICATED:
        return CliError(f"the server at {target} wants a token: pass --token or set CIRULLA_TOKEN", BAD_INPUT)
    return CliError(f"the server at {target} failed: {code.name}: {e.details()}", FAILED)
