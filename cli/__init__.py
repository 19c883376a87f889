"""The `cirulla` command line: play, hint, analyze, arena, serve, engine, habits."""
from __future__ import annotations

import argparse
from typing import TypeAlias

# what the `cirulla` parser's subcommands are added to (each module's add_parser takes it)
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
