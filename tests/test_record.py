"""Game records (solver/record.py): JSON in the cirulla.v1.Record schema, saved,
loaded and replayed through the rules; a bad record is a RecordError naming
the event and the reason."""
from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from cirulla.solver import CirullaError, Deal, HandEnd, Match, RecordError, Rules, Turn, record
from rules_support import random_match


def doc(m: Match) -> dict:
    return json.loads(record.dumps(m))


def load(d: dict) -> Match:
    return record.loads(json.dumps(d))


def index_of(m: Match, kind, nth: int = 0, pred=lambda e: True) -> int:
    hits = [i for i, e in enumerate(m.events) if isinstance(e, kind) and pred(e)]
    return hits[nth]


@pytest.fixture(scope="module")
def finished() -> Match:
    return random_match(Rules(hands=2), seed=21)


# --- round trips ---

def test_save_and_load_a_file(tmp_path, finished):
    path = tmp_path / "match.json"
    record.save(finished, path)
    back = record.load(path)
    assert back.events == finished.events and back.scores == finished.scores
    assert back.winner == finished.winner and back.is_over


def test_the_record_is_versioned_json_with_move_texts(finished):
    d = doc(finished)
    assert d["schemaVersion"] == record.SCHEMA_VERSION
    assert d["rules"]["preset"] == "classic" and d["rules"]["hands"] == 2
    turns = [e["turn"] for e in d["events"] if "turn" in e]
    assert all(t["move"]["text"] for t in turns)
    assert sum("handEnd" in e for e in d["events"]) == len(
        [e for e in finished.events if isinstance(e, HandEnd)])


@pytest.mark.parametrize("rules", [
    Rules(matta="none"), Rules(matta="QH", buona_stack=True), Rules.preset("online", players=4),
    Rules.preset("relaxed", players=3), Rules.preset("cirullone", players=2),
    Rules.preset("five"), Rules(capotun=True, re_bello=True, grande_in_hand=True),
])
def test_round_trip_every_kind_of_rules(rules):
    m = random_match(rules.replace(hands=1), seed=5)
    back = record.loads(record.dumps(m))
    assert back.rules == m.rules and back.events == m.events and back.scores == m.scores


def test_a_match_in_progress_continues_after_loading():
    m = Match(Rules(), seed=8)
    rng = random.Random(8)
    for _ in range(7):
        m.play(rng.choice(m.legal_moves))
    back = record.loads(record.dumps(m))
    assert back.phase == m.phase and back.to_move == m.to_move
    assert [str(x) for x in back.legal_moves] == [str(x) for x in m.legal_moves]
    assert back.manual_deal                       # the rest of the deal is not in the record


def test_void_deals_and_declarations_round_trip():
    """R-MONTE deals and a two-triple R-VC declaration (either order of the triples)."""
    m = Match(Rules.preset("cirullone"), dealer=0, manual_deal=True)
    m.deal(hands=["2C 3C 4C 5D 5H 5S", "JS QS KS 6S 4D 6C"], table="AC AS KC QC")   # void
    m.deal(hands=["JS QS KS 6S 4D 6C", "2C 3C 4C 5D 5H 5S"], table="KC QC JC 6D")
    m.play("declare 5D 5H 5S + 2C 3C 4C")
    d = doc(m)
    assert d["events"][0]["deal"]["void"]
    back = load(d)
    assert back.events == m.events and back.hand_points() == m.hand_points()
    # the other order of the triples in the record is the same declaration
    move = d["events"][2]["turn"]["move"]
    move["declared"], move["declaredSecond"] = move["declaredSecond"], move["declared"]
    assert load(d).events == m.events


# --- bad records: RecordError naming the event ---

def bad(d: dict, event: int | None, reason: str) -> RecordError:
    with pytest.raises(RecordError, match=reason) as info:
        load(d)
    assert info.value.event == event
    if event is not None:
        assert str(info.value).startswith(f"event {event}:")
    assert isinstance(info.value, CirullaError)
    return info.value


def test_unknown_card(finished):
    d = doc(finished)
    d["events"][0]["deal"]["table"][0] = "9X"
    bad(d, 0, "9X")


def test_a_card_twice_in_a_deal(finished):
    d = doc(finished)
    deal = d["events"][0]["deal"]
    deal["table"][0] = deal["hands"][0]["cards"][0]
    bad(d, 0, "dealt twice")


def test_a_card_dealt_again_in_a_later_round(finished):
    d = doc(finished)
    i = index_of(finished, Deal, pred=lambda e: e.round == 1)
    d["events"][i]["deal"]["hands"][0]["cards"][0] = d["events"][0]["deal"]["hands"][0]["cards"][0]
    bad(d, i, "dealt already")


def test_wrong_card_counts(finished):
    d = doc(finished)
    d["events"][0]["deal"]["hands"][1]["cards"].pop()
    bad(d, 0, "gets 3 cards")
    d = doc(finished)
    d["events"][0]["deal"]["table"].pop()
    bad(d, 0, "table gets 4")


def test_illegal_capture():
    m = Match(Rules(), dealer=0, manual_deal=True)
    m.deal(hands=["2S 3S 4S", "5H 6H KC"], table="5D JD QD KH")
    m.play("5H x 5D")
    d = doc(m)
    d["events"][1]["turn"]["move"].update(captured=["JD"], text="5H x JD")
    bad(d, 1, "not a capture the rules allow")
    d["events"][1]["turn"]["move"].update(captured=["AD"], text="5H x AD")
    bad(d, 1, "AD not on the table")
    d["events"][1]["turn"]["move"].update(captured=[], text="5H")
    bad(d, 1, "R-MUST")


def test_a_card_the_seat_does_not_hold(finished):
    d = doc(finished)
    i = index_of(finished, Turn)
    held = {str(c) for c in finished.events[0].hands[finished.events[i].seat]}
    move = d["events"][i]["turn"]["move"]
    move["card"] = next(c for c in ("AD", "2D", "3D", "4D") if c not in held
                        and c not in move.get("captured", []))
    bad(d, i, "does not hold")


def test_wrong_seat_and_wrong_scopa(finished):
    d = doc(finished)
    i = index_of(finished, Turn)
    d["events"][i]["turn"]["seat"] = 1 - finished.events[i].seat
    bad(d, i, "turn")
    d = doc(finished)
    i = index_of(finished, Turn, pred=lambda e: not e.scopa and not e.move.is_declaration)
    d["events"][i]["turn"]["scopa"] = True
    bad(d, i, "scopa")


@pytest.mark.parametrize("field", ["cards", "total", "matchTotal"])
def test_wrong_scores(finished, field):
    d = doc(finished)
    i = index_of(finished, HandEnd)
    side = d["events"][i]["handEnd"]["sides"][0]
    side[field] = side.get(field, 0) + 1
    bad(d, i, "side 0")


def test_wrong_leftover_and_hand_end_out_of_place(finished):
    d = doc(finished)
    i = index_of(finished, HandEnd)
    d["events"][i]["handEnd"]["leftoverSide"] = 7
    bad(d, i, "leftover_side")
    d = doc(finished)
    d["events"].insert(1, copy.deepcopy(d["events"][i]))
    bad(d, 1, "has not ended")


def test_wrong_dealer_and_deal_out_of_turn(finished):
    d = doc(finished)
    d["events"][0]["deal"]["dealer"] = 1 - finished.first_dealer
    bad(d, 0, "expected hand 0 round 0")
    d = doc(finished)
    d["events"].insert(2, copy.deepcopy(d["events"][0]))
    bad(d, 2, "phase 'play'")


def test_events_after_the_end(finished):
    d = doc(finished)
    d["events"].append(copy.deepcopy(d["events"][1]))
    bad(d, len(d["events"]) - 1, "phase 'over'")


def test_wrong_winner(finished):
    d = doc(finished)
    d["winner"] = 1 - finished.winner
    bad(d, None, "winner")


@pytest.mark.parametrize("text, reason", [
    ("{not json", "not JSON"),
    ('{"schemaVersion": 1, "colour": "red"}', "not a cirulla.v1.Record"),
    ('{"schemaVersion": 3}', "schema_version 3"),
    ('{"schemaVersion": 1, "rules": {"players": 1}}', "players must be"),
    ('{"schemaVersion": 1, "rules": {"players": 7}}', r"rules\.players: 7 is out of range 0\.\.5"),
    ('{"schemaVersion": 2, "events": [{"deal": {"round": 1073741824}}]}',
     r"event 0: deal\.round: 1073741824 is out of range 0\.\.5"),
    ('{"schemaVersion": 1, "rules": {"preset": "scopone"}}', "unknown preset"),
    ('{"schemaVersion": 1, "firstDealer": 3}', "first_dealer: dealer"),
    ('{"schemaVersion": 1, "events": [{}]}', "empty event"),
    # JSON, but not an object: a RecordError too, not a TypeError from the parser
    ("3", "a record is a JSON object"),
    ("null", "a record is a JSON object"),
    ("[]", "a record is a JSON object"),
])
def test_unreadable_records(text, reason):
    with pytest.raises(RecordError, match=reason):
        record.loads(text)


def test_unreadable_file(tmp_path):
    with pytest.raises(RecordError, match="cannot read"):
        record.load(tmp_path / "missing.json")


# --- records written before the schema used presence and enums ---

SCHEMA1 = sorted((Path(__file__).parent / "data" / "records_schema1").glob("*.json"))


@pytest.mark.parametrize("path", SCHEMA1, ids=[p.stem for p in SCHEMA1])
def test_records_of_schema_1_still_load(path):
    """Records saved by the version of 2026-11-30 (winner, leftover_side and
    cappotto_side -1 for none, the matta as text) load and replay, every claim
    of theirs checked; saved again they use field presence and the enum."""
    data = json.loads(path.read_text())
    match = record.load(path)
    assert match.winner == (None if data.get("winner", 0) == -1 else data.get("winner", 0))
    assert match.rules.matta == data["rules"]["matta"]             # "7H", "QH" or "none"
    again = json.loads(record.dumps(match))
    assert "winner" not in again if match.winner is None else again["winner"] == match.winner
    ends = [e["handEnd"] for e in again["events"] if "handEnd" in e]
    assert all(e.get("leftoverSide", 0) >= 0 and e.get("cappottoSide", 0) >= 0 for e in ends)
    assert again["rules"]["matta"].startswith("MATTA_")
    assert record.to_proto(record.loads(record.dumps(match))) == record.to_proto(match)


def test_there_are_schema_1_records_of_every_kind():
    assert len(SCHEMA1) >= 6
    texts = [p.read_text() for p in SCHEMA1]
    assert any('"winner": -1' in t for t in texts) and any('"leftoverSide": -1' in t for t in texts)
    assert {m for t in texts for m in ('"7H"', '"QH"', '"none"') if m in t} == {'"7H"', '"QH"', '"none"'}


def test_what_the_readers_memos_give_back_is_the_callers_own():
    """The conversions a replay repeats keep memos (cards_of, Move.from_core,
    Move.parse, move_to_proto): what one caller changes never reaches the next."""
    from cirulla.solver.cards import cards_of
    from cirulla.solver.moves import Move
    mask = (1 << 3) | (1 << 17)
    first = cards_of(mask)
    first.clear()
    assert len(cards_of(mask)) == 2
    move = Move.parse("7C x 2C 5S")
    msg = record.move_to_proto(move)
    msg.text, msg.captured[:] = "changed", []
    again = record.move_to_proto(move)
    assert again.text == "7C x 2C 5S" and list(again.captured) == ["2C", "5S"]
    declared = Move.parse("declare 2S 5C 7H=A")
    assert record.move_to_proto(declared).matta_as == "A"
    assert Move.parse(" 7C x 2C 5S ") == move and Move.parse("7C x 2C 5S") is Move.parse("7C x 2C 5S")
    long = "7C x 2C 5S" + " " * 200                  # a client's long string: read, not remembered
    assert Move.parse(long) == move and Move.parse(long) is not Move.parse(long)
