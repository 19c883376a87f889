"""Every integer of a cirulla.v1 message checked against the range its schema
declares (proto/cirulla/v1/bounds.proto), before anything loops, allocates or
recurses on it.

The ranges live in the .proto files, beside each field, where a client
developer reads them; this module only reads them. It is the door every
message from outside goes through (the service's requests, `cirulla engine`'s
queries, the files the command line reads), so that no number a client chose
drives work beyond the game's own sizes.

>>> from cirulla.v1 import game_pb2 as pb
>>> view = pb.SeatView(history=[pb.Event(deal=pb.Deal(round=2**30))])
>>> out_of_bounds(view, "view")
[('view.history[0].deal.round', '1073741824 is out of range 0..5')]
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, TypeAlias

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from cirulla.v1 import bounds_pb2

if TYPE_CHECKING:
    from google._upb import _message as upb
    from google.protobuf import descriptor

# descriptors as types-protobuf has them: a message's DESCRIPTOR is the pure-Python
# backend's or the upb backend's, and so is everything read from it
Descriptor: TypeAlias = "descriptor.Descriptor | upb.Descriptor"
FieldType: TypeAlias = "descriptor.FieldDescriptor | upb.FieldDescriptor"

_BOUNDS: Any = bounds_pb2.bounds       # (protoc's stub types an extension as a plain field)
INTEGER_TYPES = frozenset({
    FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_UINT32,
    FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SINT64,
    FieldDescriptor.TYPE_FIXED32, FieldDescriptor.TYPE_FIXED64, FieldDescriptor.TYPE_SFIXED32,
    FieldDescriptor.TYPE_SFIXED64})


def is_repeated(field: FieldType) -> bool:
    if hasattr(field, "is_repeated"):                       # protobuf >= 5.29
        return field.is_repeated
    # before, `label`, which types-protobuf (today's protobuf only) does not know
    label: int = field.label                                # type: ignore[union-attr]
    return label == FieldDescriptor.LABEL_REPEATED


def range_of(field: FieldType) -> tuple[int, int] | None:
    """The (min, max) the schema gives an integer field, None if it gives none."""
    options = field.GetOptions()
    if not options.HasExtension(_BOUNDS):
        return None
    b: bounds_pb2.Bounds = options.Extensions[_BOUNDS]
    return b.min, b.max


def field_range(message: type[Message], name: str) -> tuple[int, int]:
    """The range of `message`'s field `name`, which must have one."""
    got = range_of(message.DESCRIPTOR.fields_by_name[name])
    if got is None:
        raise LookupError(f"{message.DESCRIPTOR.full_name}.{name} has no bounds")
    return got


def out_of_bounds(msg: Message, prefix: str = "") -> list[tuple[str, str]]:
    """Every integer of `msg` (nested messages included) outside its field's
    range, as (path, reason): ``view.history[8].deal.round``. Only the fields
    that are set are visited, so the walk is as long as the message."""
    found: list[tuple[str, str]] = []
    _walk(msg, prefix, found)
    return found


def require_in_bounds(msg: Message, prefix: str = "", most: int = 3) -> None:
    """ValueError naming the first `most` numbers of `msg` out of range: the
    door of a file a reader takes in whole."""
    outside = out_of_bounds(msg, prefix)
    if outside:
        raise ValueError("; ".join(f"{field}: {reason}" for field, reason in outside[:most]))


def _walk(msg: Message, prefix: str, found: list[tuple[str, str]]) -> None:
    plan = _plan(msg.DESCRIPTOR)
    if not plan:
        return
    for field, value in msg.ListFields():
        how = plan.get(field.name)
        if how is None:
            continue
        path = f"{prefix}.{field.name}" if prefix else field.name
        repeated, bounds = how
        if bounds is None:                  # a message that holds bounded integers somewhere
            if repeated:
                for i, item in enumerate(value):
                    _walk(item, f"{path}[{i}]", found)
            else:
                _walk(value, path, found)
            continue
        lo, hi = bounds
        numbers = [(f"{path}[{i}]", n) for i, n in enumerate(value)] if repeated else [(path, value)]
        found += [(where, f"{n} is out of range {lo}..{hi}") for where, n in numbers if not lo <= n <= hi]


@functools.cache
def _plan(descriptor: Descriptor) -> dict[str, tuple[bool, tuple[int, int] | None]]:
    """The fields of a message worth visiting: its bounded integers (with their
    range) and the messages that hold some (with None)."""
    return _plan_of(descriptor, set())


def _plan_of(descriptor: Descriptor, visiting: set[str]) -> dict[str, tuple[bool, tuple[int, int] | None]]:
    visiting = visiting | {descriptor.full_name}
    plan: dict[str, tuple[bool, tuple[int, int] | None]] = {}
    for field in descriptor.fields:
        repeated = is_repeated(field)
        if field.type in INTEGER_TYPES:
            bounds = range_of(field)
            if bounds is not None:
                plan[field.name] = (repeated, bounds)
        elif field.message_type is not None:
            inner = field.message_type
            # a message type met again on the way down (recursion) is visited if it is visited at all
            if inner.full_name in visiting or _plan_of(inner, visiting):
                plan[field.name] = (repeated, None)
    return plan
