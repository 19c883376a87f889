"""`--server HOST:PORT`: the cirulla.v1 service instead of the local engine,
the arena's ``remote:HOST:PORT`` engines, and the command line's errors.

Errors come back as CliError with the command line's exit codes: a server
that cannot be reached, a request the server calls invalid (with its field
violations), or any other failure. A CliError knows its gRPC status code and
field violations, so that --json can print it as a cirulla.v1.Failure.
"""
from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

import grpc

from cirulla.server import convert
from cirulla.server.config import host_port_problem
from cirulla.server.errors import RpcError, described, failure_of, field_violations, retry_delay
from cirulla.solver.arena import REMOTE, EngineSpec, Player, make_player
from cirulla.solver.errors import CirullaError
from cirulla.solver.match import Match
from cirulla.solver.moves import Move
from cirulla.v1 import analysis_service_pb2_grpc, engine_service_pb2_grpc
from cirulla.v1 import engine_service_pb2 as epb
from cirulla.v1.embedded_engine_pb2 import Failure

CONNECT_SECONDS = float(os.environ.get("CIRULLA_CONNECT_SECONDS", "5"))   # to wait for a server

# exit codes (also in `cirulla --help`)
OK, FAILED, USAGE, BAD_INPUT, UNREACHABLE, NO_FILE = 0, 1, 2, 3, 4, 5


# the gRPC status each exit code stands for, in a --json Failure
STATUS = {FAILED: grpc.StatusCode.UNKNOWN, USAGE: grpc.StatusCode.INVALID_ARGUMENT,
          BAD_INPUT: grpc.StatusCode.INVALID_ARGUMENT, UNREACHABLE: grpc.StatusCode.UNAVAILABLE,
          NO_FILE: grpc.StatusCode.NOT_FOUND}


class CliError(Exception):
    """A failure the command line reports in one line, with its exit code (and,
    for --json, its status code, field violations and retry delay)."""

    def __init__(self, message: str, code: int = BAD_INPUT, *, status: grpc.StatusCode | None = None,
                 violations: Sequence[tuple[str, str]] = (), retry_after: float | None = None):
        super().__init__(message)
        self.code = code
        self.status = status or STATUS[code]
        self.violations = list(violations)
        self.retry_after = retry_after

    @classmethod
    def of(cls, error: CirullaError, where: str = "") -> CliError:
        """A domain error about the caller's input (exit 3), its fields under `where`."""
        fields = [(".".join(p for p in (where, f) if p), r) for f, r in error.violations]
        return cls(str(error), BAD_INPUT, violations=[(f, described(f, r)) for f, r in fields])

    def failure(self) -> Failure:
        failure = failure_of(RpcError(self.status, str(self), retry_after=self.retry_after))
        for field, reason in self.violations:
            failure.field_violations.add(field=field, description=reason)
        return failure


class Remote:
    """Stubs on a channel to a running server, checked reachable."""

    @classmethod
    def of(cls, args: argparse.Namespace) -> Remote:
        """The server the command's --server, --token and --tls-ca name."""
        return cls(args.server, token=args.token, tls_ca=args.tls_ca)

    def __init__(self, target: str, *, token: str | None = None, tls_ca: str | None = None):
        self.target = target
        problem = host_port_problem(target)
        if problem:
            raise CliError(f"--server {problem}, got {target!r}", USAGE)
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

    def __enter__(self) -> Remote:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()


def rpc_error(e: grpc.RpcError, target: str) -> CliError:
    """A failed call as a one-line error with its exit code."""
    code = e.code()
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return CliError(f"the server at {target} stopped answering: {e.details()}", UNREACHABLE, status=code)
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        problems = field_violations(e)
        if problems:
            return CliError("the server refused the request: " +
                            "; ".join(f"{field}: {why}" for field, why in problems), BAD_INPUT,
                            violations=problems)
        return CliError(f"the server refused the request: {e.details()}", BAD_INPUT)
    if code == grpc.StatusCode.UNAUTHENTICATED:
        return CliError(f"the server at {target} wants a token: pass --token or set CIRULLA_TOKEN", BAD_INPUT,
                        status=code)
    return CliError(f"the server at {target} failed: {code.name}: {e.details()}", FAILED, status=code,
                    retry_after=retry_delay(e))


# --- the arena's remote engines -----------------------------------------------------

REMOTE_CALL_SECONDS = 120.0     # one move's call: a hang, not a slow search, runs past it
REMOTE_RETRIES = 100            # refusals of a busy server (RESOURCE_EXHAUSTED) waited out in a row
_servers: dict[str, Remote] = {}  # this process's channels, by address: every game of a run shares them


class RemotePlayer:
    """An arena engine that plays through a server (EngineSpec ``remote:...``):
    its GetHint at the server's default budget, or at the spec's budget spent
    whole (as the local ``ismcts:10000it``), or its ChooseMove at the spec's
    level; seeded from the arena's seed. A forced move is played without a
    call, as the local engines do. A refusal of a busy server is retried after
    its RetryInfo delay; any other failure is the run's (a CliError)."""

    def __init__(self, spec: EngineSpec, seed: int):
        assert spec.kind == REMOTE and spec.address is not None, "a remote engine's spec"
        self.spec = spec
        self.rng = random.Random(seed)
        if spec.address not in _servers:
            _servers[spec.address] = Remote(spec.address)
        self.remote = _servers[spec.address]

    def __call__(self, match: Match) -> Move:
        if len(match.legal_moves) == 1:
            return match.legal_moves[0]
        view = convert.view_to_proto(match.view(match.to_move))
        seed = self.rng.getrandbits(63)
        spec = self.spec
        for _ in range(REMOTE_RETRIES):
            try:
                if spec.level is not None:
                    chosen = self.remote.engine.ChooseMove(
                        epb.ChooseMoveRequest(view=view, seed=seed, strength=f"STRENGTH_{spec.level.upper()}"),
                        timeout=REMOTE_CALL_SECONDS, metadata=self.remote.metadata).move
                else:
                    budget = epb.Budget(iterations=spec.iterations or 0, time_ms=int(spec.time_ms or 0),
                                        exhaust=spec.iterations is not None or spec.time_ms is not None)
                    chosen = self.remote.engine.GetHint(epb.GetHintRequest(view=view, seed=seed, budget=budget),
                                                        timeout=REMOTE_CALL_SECONDS,
                                                        metadata=self.remote.metadata).hint.best
                return convert.move_from_proto(chosen, match.rules, "move")
            except grpc.RpcError as e:
                if e.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                    raise rpc_error(e, self.remote.target) from None
                time.sleep(retry_delay(e) or 0.1)
        raise CliError(f"the server at {self.remote.target} refused {REMOTE_RETRIES} calls in a row: "
                       "too busy for the arena", FAILED)


def arena_player(spec: EngineSpec, seed: int) -> Player:
    """`cirulla arena`'s players: the solver's engines, and ``remote`` ones."""
    return RemotePlayer(spec, seed) if spec.kind == REMOTE else make_player(spec, seed)
