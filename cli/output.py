"""Where a command's output goes.

Readable output goes to stdout, or to stderr under --json, where stdout holds
only the command's one cirulla.v1 message in protobuf's JSON mapping (a
cirulla.v1.Failure if the command fails): a script reads stdout and the exit
code, a person reads stderr.
"""
from __future__ import annotations

import argparse
import sys

from google.protobuf import json_format
from google.protobuf.message import Message
from rich.console import Console


def console_for(args: argparse.Namespace) -> Console:
    """The console for readable output: stdout, or stderr under --json."""
    return Console(stderr=True, highlight=False) if getattr(args, "json", False) else Console(highlight=False)


def emit(message: Message) -> None:
    """The command's result on stdout, as one message in protobuf's JSON mapping."""
    sys.stdout.write(json_format.MessageToJson(message, indent=2) + "\n")
    sys.stdout.flush()
