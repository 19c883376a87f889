"""Coverage-guided fuzzing (atheris, libFuzzer) of the record decoders.

An input that starts with "{" is JSON text (a saved game, `cirulla analyze
FILE`): `cirulla.solver.record.loads` may raise RecordError and nothing else.
Any other input is a serialized cirulla.v1.Record, taken through what the
server does with one:
- ReplayRecord: `convert.check_record` (BadRequest: not a record at all),
  then `record.from_proto` (RecordError naming the event the rules reject),
  then the state it answers with (`convert.match_state_to_proto`);
- AnalyzeGame: `convert.record_from_proto` (BadRequest), then the number of
  decisions it would analyse;
- `record.from_proto` alone too (the command line's path: RecordError only),
  whatever check_record said.
A record that replays must replay again from `record.to_proto` of its match.
Any other exception is a finding, and so is an input slower than `-timeout` or
taking the process past `-rss_limit_mb` (libFuzzer's). Bytes that are not a Record at all
(DecodeError) are skipped: the server's lenient decoding answers them first.

Half of the mutations of a binary record are structural (`fuzz/malformed.py`'s
`mutate`), half libFuzzer's own on the bytes. Only cirulla.* is instrumented.

    python tests/fuzz/fuzz_record.py NEW tests/fuzz/corpus/record -max_total_time=300 -timeout=5
    python tests/fuzz/fuzz_record.py -merge=1 tests/fuzz/corpus/record NEW
    python tests/fuzz/fuzz_record.py crash-<sha1>                        # replay one input (or timeout-, oom-)

tests/test_fuzz.py runs it for a few seconds over the committed corpus, with
the limits FUZZ_TIMEOUT_SECONDS and FUZZ_RSS_LIMIT_MB.
"""
from __future__ import annotations

import sys
from pathlib import Path

import atheris
from google.protobuf.message import DecodeError

with atheris.instrument_imports(include=["cirulla"]):
    from cirulla.server import convert
    from cirulla.server.errors import BadRequest
    from cirulla.solver import analysis, players, record  # noqa: F401 - players: imported by fuzz.malformed
    from cirulla.solver.errors import RecordError
    from cirulla.v1 import game_pb2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))       # tests/, for fuzz.malformed
from fuzz.mutator import structural  # noqa: E402


def _replays_again(match) -> None:
    again = record.to_proto(match)
    try:
        record.from_proto(again)
    except RecordError as e:
        raise AssertionError(f"the record of a replayed match does not replay: {e}\n{again}") from None


def TestOneInput(data: bytes) -> None:
    if data[:1] == b"{":
        try:
            match = record.loads(data.decode("utf-8", "replace"))
        except RecordError:
            return
        _replays_again(match)
        return
    try:
        msg = game_pb2.Record.FromString(data)
    except DecodeError:
        return
    try:                                                # the command line's path
        replayed = record.from_proto(msg)
    except RecordError:
        replayed = None
    try:                                                # ReplayRecord
        convert.check_record(msg)
    except BadRequest:
        return
    if replayed is not None:
        convert.match_state_to_proto(replayed)
        _replays_again(replayed)
    try:                                                # AnalyzeGame
        match = convert.record_from_proto(msg)
    except BadRequest:
        return
    analysis.decision_count(match)


def main() -> None:
    binary = structural(game_pb2.Record, applies=lambda data: data[:1] != b"{")     # JSON text: libFuzzer's own
    atheris.Setup(sys.argv, TestOneInput, custom_mutator=binary)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
