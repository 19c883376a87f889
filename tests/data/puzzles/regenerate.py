"""Makes the fixture of tests/test_puzzles.py again: 100 seeded one-hand games
(50 duplicate pairs of the casual level against greedy, `cirulla arena`),
their records as one JSON-lines file, and their batch analysis at 2,000
iterations a search (`cirulla analyze`), both gzipped (the test unpacks them).

    python tests/data/puzzles/regenerate.py        # about 70 s of CPU on one core

The analysis runs in this folder, so each line's source is `records.jsonl:N`,
found beside the results as `cirulla puzzles` looks for it.
"""
from __future__ import annotations

import gzip
import subprocess
import sys
import tempfile
from pathlib import Path

from google.protobuf import json_format

from cirulla.solver import record

HERE = Path(__file__).resolve().parent
CLI = [sys.executable, "-m", "cirulla.cli.main"]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        games = Path(tmp) / "games"
        subprocess.run([*CLI, "arena", "casual", "greedy", "--hands", "1", "--pairs", "50", "--seed", "1",
                        "--save", str(games)], check=True)
        lines = [json_format.MessageToJson(record.to_proto(record.load(f)), indent=None)
                 for f in sorted(games.glob("*.json"))]
    (HERE / "records.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    (HERE / "results.jsonl").unlink(missing_ok=True)
    subprocess.run([*CLI, "analyze", "records.jsonl", "--out", "results.jsonl", "--iterations", "2000",
                    "--jobs", "1"], check=True, cwd=HERE)
    for name in ("records.jsonl", "results.jsonl"):
        plain = HERE / name
        with gzip.GzipFile(HERE / f"{name}.gz", "wb", mtime=0) as packed:     # the same bytes every time
            packed.write(plain.read_bytes())
        plain.unlink()


if __name__ == "__main__":
    main()
