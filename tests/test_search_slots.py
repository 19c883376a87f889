"""The search slots shared out between peers (server/limits.py SearchSlots):
one client cannot keep the others out by flooding the server."""
from __future__ import annotations

import threading

import grpc
import pytest

from cirulla.server.errors import RpcError
from cirulla.server.limits import SearchSlots
from server_support import until


def waiter(slots: SearchSlots, peer: str, got: list[str]) -> threading.Thread:
    """A call of `peer` waiting for one slot; its name goes to `got` when it has it (and it keeps it).
    Those still waiting when a test ends are refused at their wait's end, quietly."""
    def run() -> None:
        try:
            slots.acquire(1, peer=peer)
        except RpcError:
            return
        got.append(peer)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_a_lone_peer_uses_every_free_slot():
    slots = SearchSlots(2, wait_ms=0, max_waiting=0)
    slots.acquire(1, peer="a")
    slots.acquire(1, peer="a")
    assert slots.in_use == 2


def test_a_freed_slot_goes_to_the_peer_holding_fewest_not_the_first_in_line():
    slots = SearchSlots(2, wait_ms=3_000, max_waiting=8)
    first = slots.acquire(1, peer="flood")
    slots.acquire(1, peer="flood")
    got: list[str] = []
    flood = waiter(slots, "flood", got)
    until(lambda: slots.waiting == 1)
    other = waiter(slots, "other", got)           # came later, holds nothing
    until(lambda: slots.waiting == 2)
    slots.release(1, first, "flood")
    until(lambda: got)
    assert got == ["other"]                       # first come, first served would give it to "flood"
    assert slots.waiting == 1
    other.join(1)
    slots.release(1, 99, "other")                 # "flood" holds 1, nobody else waits: its turn
    until(lambda: len(got) == 2)
    flood.join(1)
    assert got == ["other", "flood"]


def test_among_equals_first_come_first_served():
    slots = SearchSlots(1, wait_ms=3_000, max_waiting=8)
    held = slots.acquire(1, peer="x")
    got: list[str] = []
    for n, peer in enumerate(("b", "c"), 1):
        waiter(slots, peer, got)
        until(lambda n=n: slots.waiting == n)
    slots.release(1, held, "x")
    until(lambda: got)
    assert got == ["b"]


def test_one_peer_may_fill_at_most_half_the_queue():
    slots = SearchSlots(1, wait_ms=3_000, max_waiting=4)
    held = slots.acquire(1, peer="flood")
    got: list[str] = []
    for n in (1, 2):
        waiter(slots, "flood", got)
        until(lambda n=n: slots.waiting == n)
    with pytest.raises(RpcError) as refused:
        slots.acquire(1, peer="flood")
    assert refused.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "this peer's" in refused.value.message and refused.value.retry_after
    waiter(slots, "other", got)                   # the rest of the queue is the others'
    until(lambda: slots.waiting == 3)
    slots.release(1, held, "flood")
    until(lambda: len(got) == 1)
    assert got == ["flood"] and slots.waiting == 2  # nobody holds a slot: the first in line


def test_a_call_the_slots_would_refuse_is_refused_before_its_view_is_read():
    """Saturated, the server refused most calls only after reading and checking
    their views (1,716 refusals beside 425 answers in 10 s: more CPU than the
    searches); now a call that would find no slot and no room to wait is
    refused first: a bad view, then, is RESOURCE_EXHAUSTED, not INVALID_ARGUMENT."""
    from cirulla.server.config import ServerConfig
    from cirulla.server.service import Service
    from cirulla.v1 import engine_service_pb2 as epb
    from cirulla.v1 import game_pb2 as pb
    from server_support import Call
    service = Service(ServerConfig(max_concurrent_searches=1, slot_wait_ms=0, max_waiting_searches=0))
    bad = epb.GetHintRequest(view=pb.SeatView(hand=["XX"]))
    with pytest.raises(Exception) as idle:
        service.get_hint(bad, Call())
    assert getattr(idle.value, "code", None) != grpc.StatusCode.RESOURCE_EXHAUSTED     # read: its view is bad
    ticket = service.limits.slots.acquire(1, peer="other")
    try:
        for call in (lambda: service.get_hint(bad, Call()), lambda: list(service.stream_hint(
                epb.StreamHintRequest(view=bad.view), Call())),
                lambda: service.choose_move(epb.ChooseMoveRequest(view=bad.view), Call())):
            with pytest.raises(RpcError) as busy:
                call()
            assert busy.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        service.limits.slots.release(1, ticket, peer="other")


def test_the_retry_hint_follows_how_long_searches_hold_their_slots():
    """A search with a stopping rule ends long before its caps: a refused
    call is told to come back when the searches lately took, not the caps."""
    from cirulla.server.config import ServerConfig
    from cirulla.server.limits import Limits
    from cirulla.solver.search import DEFAULT_BUDGET
    from server_support import Call
    limits = Limits(ServerConfig(max_concurrent_searches=1, slot_wait_ms=0, max_waiting_searches=0))
    assert limits.slots.typical_ms is None
    with limits.searching(DEFAULT_BUDGET, Call()):
        pass                                    # a search that took no time at all
    assert limits.slots.typical_ms is not None and limits.slots.typical_ms < 1_000
    with limits.searching(DEFAULT_BUDGET, Call()):
        with pytest.raises(RpcError) as refused:
            limits.slots.acquire(1, peer="next")
    cap_ms = DEFAULT_BUDGET.iterations / 300    # what the caps alone would have said: about 67 ms
    assert refused.value.retry_after * 1000 < cap_ms / 2


def test_a_call_the_line_would_keep_past_its_wait_is_refused_at_once_and_told_when_there_is_room():
    """Searches lately held their slot T (100 ms or more) and a call may wait
    T / 2. The one slot's search is due to end now: a first call waits for it;
    a second would wait for the first's search too, T, past its wait: refused
    at once (not at its wait's end) and told to retry when its wait should be
    short enough (T / 2 later, not the 10 ms floor)."""
    slots = SearchSlots(1, wait_ms=10_000, max_waiting=8)
    with slots.hold(1, peer="x"):
        threading.Event().wait(0.1)
    typical = slots.typical_ms
    assert typical is not None and typical >= 100
    slots.wait_ms = int(typical / 2)
    held = slots.acquire(1, peer="x", expected_ms=0.0)
    got: list[str] = []
    first = waiter(slots, "a", got)
    until(lambda: slots.waiting == 1)
    with pytest.raises(RpcError) as refused:
        slots.acquire(1, peer="b")
    assert refused.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert f"more than this call may wait ({slots.wait_ms} ms) to clear" in refused.value.message
    assert refused.value.retry_after is not None and refused.value.retry_after >= typical / 2 / 1000 - 0.01
    slots.release(1, held, "x")
    until(lambda: got == ["a"])
    first.join(1)


def test_a_call_waits_for_a_long_search_that_is_about_to_end():
    """Searches lately held their slot 10 s, but the one holding it now is due
    to end at once: a call waits for it (up to its 200 ms), not refused for the
    typical search's length."""
    slots = SearchSlots(1, wait_ms=200, max_waiting=8)
    slots._typical_ms = 10_000.0                  # (as after long searches: the moving average)
    held = slots.acquire(1, peer="x", expected_ms=0.0)
    got: list[str] = []
    first = waiter(slots, "a", got)
    until(lambda: slots.waiting == 1)
    slots.release(1, held, "x")
    until(lambda: got == ["a"])
    first.join(1)
