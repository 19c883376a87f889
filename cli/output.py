"""Where a command's output goes.

Readable output goes to stdout, or to stderr under --json, where stdout holds
only the command's one cirulla.v1 message in protobuf's JSON mapping (a
cirulla.v1.Failure if the command fails): a script reads stdout and the exit
code, a person reads stderr.
"""
from __future__ import annotations

import argparse
import codecs
import io
import sys
import unicodedata

from google.protobuf import json_format
from google.protobuf.message import Message
from rich.console import Console


def console_for(args: argparse.Namespace) -> Console:
    """The console for readable output: stdout, or stderr under --json."""
    return Console(stderr=True, highlight=False) if getattr(args, "json", False) else Console(highlight=False)


def emit(message: Message) -> None:
    """The command's result on stdout, as one message in protobuf's JSON mapping."""
    write_data(json_format.MessageToJson(message, indent=2, ensure_ascii=False) + "\n")


def write_data(text: str) -> None:
    """Data (JSON) on stdout in UTF-8, as JSON is, whatever the terminal's
    encoding: never written plain, as the text for people is."""
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.buffer.flush()


# what a character of the text becomes where the terminal's encoding lacks it (LC_ALL=C), one
# for one so that the tables keep their columns: the suits as the card codes write them, signs
# and dashes in ASCII (± as ~); else the letter without its accent (è: e), else "?"
_PLAIN = {"♠": "S", "♥": "H", "♦": "D", "♣": "C", "—": "-", "–": "-", "−": "-", "×": "x", "→": ">", "←": "<",
          "±": "~", "…": ".", "·": "-", "★": "*", "☆": "*", "≥": ">"}


def _plain(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = error.object[error.start:error.end]
    return "".join(_PLAIN.get(c) or unicodedata.normalize("NFKD", c).encode("ascii", "ignore").decode() or "?"
                   for c in text), error.end


codecs.register_error("cirulla-plain", _plain)


def plain_where_needed() -> None:
    """Standard output and error that write what the terminal's encoding lacks
    in plain ASCII (7♠ as 7S) instead of failing on it: a C locale's terminal
    reads the game, where it raised UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and not _can_write("".join(_PLAIN), stream.encoding):
            stream.reconfigure(errors="cirulla-plain")


def _can_write(text: str, encoding: str) -> bool:
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return False
    return True
