"""A record is exactly the events the rules produce, one for one
(solver/record.py, from_proto): the replay walks the record's events in
lockstep with the match's. A hand's last turn is followed by that hand's
hand_end and by nothing else; a hand_end comes only there, once; a record
that names a winner is finished. An unfinished record may stop after any
event (the CLI's ``hint --event`` cuts one anywhere)."""
from __future__ import annotations

import copy
import json

import pytest
from google.protobuf import json_format

from cirulla.server import convert
from cirulla.server.errors import BadRequest
from cirulla.solver import HandEnd, Match, RecordError, Rules, Turn, record
from cirulla.solver.match import Phase
from cirulla.v1 import game_pb2 as pb
from rules_support import random_match


@pytest.fixture(scope="module")
def finished() -> Match:
    """Two hands, won by side 0 (a schema-1 record leaves a winner 0 out)."""
    m = random_match(Rules(hands=2), seed=21)
    assert m.winner == 0 and sum(isinstance(e, HandEnd) for e in m.events) == 2
    return m


def doc(m: Match) -> dict:
    return json.loads(record.dumps(m))


def ends(d: dict) -> list[int]:
    return [i for i, e in enumerate(d["events"]) if "handEnd" in e]


def refused(d: dict, event: int | None, *words: str) -> RecordError:
    with pytest.raises(RecordError) as info:
        record.loads(json.dumps(d))
    err = info.value
    assert err.event == event, str(err)
    if event is not None:
        assert err.field.startswith(f"events[{event}]"), err.field
    for w in words:
        assert w in err.reason, err.reason
    return err


def schema1(d: dict) -> dict:
    """The record as the version of 2026-11-30 wrote it (tests/data/records_schema1):
    no field presence (a side 0 left out, none as -1), the matta as text."""
    d = copy.deepcopy(d)
    d["schemaVersion"] = 1
    d["rules"]["matta"] = {"MATTA_SEVEN_OF_HEARTS": "7H", "MATTA_QUEEN_OF_HEARTS": "QH"}.get(
        d["rules"]["matta"], "none")
    d["winner"] = d.get("winner", -1)
    for e in d["events"]:
        if "handEnd" in e:
            for name in ("leftoverSide", "cappottoSide"):
                e["handEnd"][name] = e["handEnd"].get(name, -1)
    for holder in [d] + [e["handEnd"] for e in d["events"] if "handEnd" in e]:
        for name in ("winner", "leftoverSide", "cappottoSide"):
            if holder.get(name) == 0:
                del holder[name]
    return d


def test_schema1_helper_writes_what_the_old_version_wrote(finished):
    d = schema1(doc(finished))
    assert "winner" not in d and record.loads(json.dumps(d)).events == finished.events


def test_a_repeated_hand_end_is_refused(finished):
    d = doc(finished)
    i = ends(d)[0]
    d["events"][i + 1:i + 1] = [copy.deepcopy(d["events"][i]) for _ in range(50)]
    refused(d, i + 1, "hand 0 has not ended here", "once")


def test_a_hand_end_swapped_with_the_next_deal_is_refused(finished):
    d = doc(finished)
    i = ends(d)[0]
    assert "deal" in d["events"][i + 1]
    d["events"][i], d["events"][i + 1] = d["events"][i + 1], d["events"][i]
    err = refused(d, i, "a deal where the hand_end of hand 0 must be", f"events[{i - 1}]")
    assert err.field == f"events[{i}]"


def test_a_missing_hand_end_is_refused(finished):
    d = doc(finished)
    i = ends(d)[0]
    del d["events"][i]
    refused(d, i, "a deal where the hand_end of hand 0 must be", "R-LEFTOVER")


def test_a_hand_end_before_the_hands_end_is_refused(finished):
    d = doc(finished)
    i = ends(d)[0]
    d["events"].insert(i - 1, d["events"].pop(i))          # one turn early
    refused(d, i - 1, "hand 0 has not ended here")


@pytest.mark.parametrize("schema", [2, 1])
def test_a_record_naming_the_winner_without_the_last_hand_end_is_refused(finished, schema):
    """Unfinished (the hand_end that ends the match is missing), yet naming the
    winner: schema 2 names it by presence, schema 1 by leaving a winner 0 out."""
    d = doc(finished)
    last = ends(d)[-1]
    del d["events"][last]
    if schema == 1:
        d = schema1(d)
        assert "winner" not in d
    else:
        assert d["winner"] == 0
    refused(d, last, "without its hand_end", "ends the match")


def test_a_record_without_the_last_hand_end_and_no_winner_is_refused(finished):
    """Naming no winner, it contradicts the replay, where that hand ends the
    match: the error names the missing event."""
    d = doc(finished)
    last = ends(d)[-1]
    del d["events"][last]
    del d["winner"]
    refused(d, last, "without its hand_end")


def test_an_unfinished_record_names_no_winner(finished):
    """Cut in its second hand, a record names no winner. Schema 2: a winner is
    named by its presence; schema 1: a winner left out is side 0, and -1 is
    none. (A guard: the replay refused these before too.)"""
    d = doc(finished)
    cut = ends(d)[0] + 5                                    # in the second hand
    d["events"] = d["events"][:cut]
    for w in (0, 1):
        d["winner"] = w
        err = refused(d, None, f"names winner {w}", "none yet")
        assert err.field == "winner"
    del d["winner"]
    assert record.loads(json.dumps(d)).winner is None
    old = schema1(d)
    assert old["winner"] == -1
    assert record.loads(json.dumps(old)).winner is None
    del old["winner"]                                       # side 0, in schema 1
    refused(old, None, "names winner 0", "none yet")
    old["winner"] = 1
    refused(old, None, "names winner 1")


def test_every_cut_of_a_record_loads_as_unfinished(finished):
    """Every prefix of a record the engine wrote loads (without a winner) and
    replays to the same events, but the one that drops the last hand_end: the
    hand that ended the match is over in the replay. A cut between a hand's
    last turn and its hand_end keeps the hand_end the rules produced."""
    full = doc(finished)
    n = len(full["events"])
    for k in range(n):
        d = dict(full, events=full["events"][:k])
        d.pop("winner")
        if k == n - 1:
            refused(d, k, "without its hand_end")
            continue
        m = record.loads(json.dumps(d))
        assert m.winner is None
        extra = 1 if k and isinstance(finished.events[k - 1], Turn) and isinstance(finished.events[k], HandEnd) \
            else 0
        assert m.events == finished.events[:k + extra]
        if extra:
            assert m.phase is Phase.DEAL


@pytest.mark.parametrize("rules", [Rules.preset("online", players=4), Rules.preset("five"),
                                   Rules.preset("cirullone", players=3), Rules(capotun=True, players=3)])
def test_records_the_engine_writes_load(rules):
    m = random_match(rules.replace(hands=2), seed=3)
    back = record.loads(record.dumps(m))
    assert back.events == m.events and back.winner == m.winner


def test_the_server_names_the_event(finished):
    d = doc(finished)
    i = ends(d)[0]
    d["events"].insert(i + 1, copy.deepcopy(d["events"][i]))
    msg = json_format.ParseDict(d, pb.Record())
    with pytest.raises(BadRequest) as info:
        convert.record_from_proto(msg)
    [(field, reason)] = info.value.violations
    assert field == f"record.events[{i + 1}]" and "has not ended" in reason
