"""Helpers shared by the server tests: positions as protobuf views, in-process
servers on a free loopback port, the status details of failed calls, and a
wait for a condition that fails on a hang."""
from __future__ import annotations

import contextlib
import random
import time

import grpc

from cirulla.server import convert
from cirulla.server.config import ServerConfig
from cirulla.server.errors import field_violations
from cirulla.solver import Match, Rules
from cirulla.solver.players import GreedyPlayer
from cirulla.v1 import engine_service_pb2_grpc, rules_service_pb2_grpc


def position(seed: int = 1, plies: int = 3, rules: Rules | None = None) -> Match:
    """A match `plies` greedy moves into its first hand, with a choice to make."""
    match = Match(rules or Rules(), seed=seed)
    greedy = GreedyPlayer()
    for _ in range(plies):
        match.play(greedy.choose(match))
    return match


def view_msg(match: Match, seat: int | None = None):
    """The protobuf view of `seat` (default: the seat to move)."""
    return convert.view_to_proto(match.view(match.to_move if seat is None else seat))


def choice_position(min_moves: int = 3, rules: Rules | None = None) -> Match:
    """A position whose seat to move has at least `min_moves` legal moves."""
    rng = random.Random(7)
    for seed in range(200):
        match = position(seed, rng.randrange(0, 4), rules)
        if len(match.legal_moves) >= min_moves:
            return match
    raise AssertionError("no such position")


@contextlib.contextmanager
def running(**options):
    """An in-process server on a free port of 127.0.0.1."""
    from cirulla.server.app import build
    server = build(ServerConfig(listen="127.0.0.1:0", **options))
    try:
        yield server
    finally:
        server.shutdown(0)


class Call:
    """A call to hand the service directly (server/limits.py Call): no deadline, never ends."""

    def time_remaining(self):
        return None

    def add_callback(self, callback):
        return True

    def peer(self):
        return "test"

    def cancel(self):
        pass


class Stubs:
    def __init__(self, channel: grpc.Channel):
        self.channel = channel
        self.engine = engine_service_pb2_grpc.EngineServiceStub(channel)
        self.rules = rules_service_pb2_grpc.RulesServiceStub(channel)


def stubs(server, channel_credentials=None) -> Stubs:
    target = f"127.0.0.1:{server.port}"
    if channel_credentials is None:
        return Stubs(grpc.insecure_channel(target))
    return Stubs(grpc.secure_channel(target, channel_credentials))


def failure(call, *args, **kwargs) -> tuple[grpc.StatusCode, list[tuple[str, str]], str]:
    """Make a call that must fail; its code, field violations and message."""
    try:
        call(*args, **kwargs)
    except grpc.RpcError as e:
        return e.code(), field_violations(e), e.details()
    raise AssertionError("the call succeeded")


def until(condition, seconds: float = 5.0) -> None:
    """Wait for condition() to hold; a hang fails after `seconds`."""
    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.001)
