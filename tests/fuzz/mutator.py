"""The fuzzers' custom mutator: half of the mutations structural (through the
message's descriptor: fuzz.malformed.mutate), half libFuzzer's own on the bytes."""
from __future__ import annotations

import random
from collections.abc import Callable

import atheris
from google.protobuf.message import DecodeError, Message

from fuzz.malformed import mutate

Mutator = Callable[[bytes, int, int], bytes]


def structural(message: type[Message], applies: Callable[[bytes], bool] = lambda data: True) -> Mutator:
    """A libFuzzer custom mutator for inputs that are serialized `message`s
    (where `applies`; other inputs get libFuzzer's mutations only)."""
    def mutator(data: bytes, max_size: int, seed: int) -> bytes:
        rng = random.Random(seed)
        if applies(data) and rng.random() < 0.5:
            try:
                msg = message.FromString(data)
            except DecodeError:
                msg = None
            if msg is not None:
                mutate(rng, msg)
                out = msg.SerializeToString()
                if len(out) <= max_size:
                    return out
        return atheris.Mutate(data, max_size)
    return mutator
