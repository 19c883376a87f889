"""Write the seed corpora of the atheris fuzzers from real messages.

    python tests/fuzz/make_corpus.py         # (re)writes tests/fuzz/corpus/{view,record}/seed-*

- corpus/view/: serialized cirulla.v1.SeatView messages of the seat to move
  (the positions of fuzz/malformed.py: several presets and player counts,
  early and late in a hand, a second hand; each full and as the smallest view
  a client sends), and one view of a seat that is not to move.
- corpus/record/: serialized cirulla.v1.Record messages of one-hand greedy
  matches (several presets, whole and cut after some event), the same records
  as compact JSON text (what `cirulla.solver.record.loads` reads; fuzz_record.py
  takes an input that starts with "{" as JSON), and the schema-1 records of
  tests/data/records_schema1 that fit in a few KB, and the regressions (JSON
  nested thousands deep).

The files written here are named seed-*; the fuzzers' finds kept with
`-merge=1` are named by their SHA-1 (libFuzzer's names) and left alone.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from google.protobuf import json_format

TESTS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TESTS))

from fuzz.malformed import base_records, base_views  # noqa: E402
from server_support import position, view_msg  # noqa: E402

CORPUS = Path(__file__).resolve().parent / "corpus"


def main() -> None:
    views, records = CORPUS / "view", CORPUS / "record"
    for folder in (views, records):
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("seed-*"):
            old.unlink()
    for i, view in enumerate(base_views()):
        (views / f"seed-{i:02d}-{view.rules.preset}-{view.rules.players}p.pb").write_bytes(view.SerializeToString())
    match = position(3, 5)
    other = view_msg(match, (match.to_move + 1) % match.rules.players)
    (views / "seed-not-to-move.pb").write_bytes(other.SerializeToString())
    kept = 0
    for i, msg in enumerate(base_records()):
        name = f"seed-{i:02d}-{msg.rules.preset}-{msg.rules.players}p-{len(msg.events)}ev"
        if len(msg.events) not in (2, 13) and not msg.HasField("winner"):
            continue                    # of the cuts, two per preset
        (records / f"{name}.pb").write_bytes(msg.SerializeToString())
        if msg.HasField("winner"):      # the whole record as JSON too
            data = json_format.MessageToDict(msg)
            (records / f"{name}.json").write_text(json.dumps(data, separators=(",", ":")))
        kept += 1
    for path in sorted((TESTS / "data" / "records_schema1").glob("*.json")):
        text = path.read_text()
        if len(text) < 8_000:
            compact = json.dumps(json.loads(text), separators=(",", ":"))
            (records / f"seed-schema1-{path.stem}.json").write_text(compact)
    # regression: JSON nested thousands deep made record.loads raise RecursionError, not RecordError
    (records / "seed-regression-nested-json.json").write_text('{"events":' + "[" * 5000)
    for folder in (views, records):
        files = list(folder.iterdir())
        print(f"{folder.relative_to(TESTS.parent)}: {len(files)} files, {sum(f.stat().st_size for f in files)} bytes")


if __name__ == "__main__":
    main()
