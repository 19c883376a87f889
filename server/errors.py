"""Errors on the wire: google.rpc.Status with the conventional details.

Servicers raise; the `rpc` decorator (`rpc_stream` for a server-streaming
method) turns what they raise into a status:
- BadRequest (bad input) -> INVALID_ARGUMENT with google.rpc.BadRequest field
  violations, e.g. `view.hand[2]`: unknown card 'ZZ'; each field is its path of
  proto names, and where protobuf's JSON mapping names it otherwise, the
  description ends with that name too: `budget.time_ms`: -5 is out of range
  0..10000 (JSON: budget.timeMs);
- RpcError(code, message) -> that code (RESOURCE_EXHAUSTED, UNAVAILABLE...),
  with a google.rpc.RetryInfo when it says when to retry, and the same delay
  as gRPC's own retry pushback (`grpc-retry-pushback-ms`): a client whose
  service config retries RESOURCE_EXHAUSTED (examples/service_config.json)
  waits that long and retries, on another replica under round_robin; a
  RESOURCE_EXHAUSTED that will not pass by waiting says -1 (do not retry);
- anything else -> INTERNAL, logged with its traceback, never shown to the caller.

What goes back is bounded, whatever the request echoed: each field path and
description at MAX_TEXT characters, the status message at MAX_MESSAGE_BYTES
once percent-encoded, the whole google.rpc.Status (the
grpc-status-details-bin trailer) at MAX_DETAILS_BYTES, later violations left
out to fit (the message says how many the details list). Clients refuse
trailers past their metadata limit, and then see RESOURCE_EXHAUSTED "Stream
removed" instead of the error:
- grpc-core (Python, C++, Ruby...) has a soft limit of 8 KiB (calls past it
  refused at random, more often up to the hard limit of 16 KiB); grpc-java's
  limit is 8 KiB. Both count HPACK's way, name + value + 32 per entry, -bin
  values base64-encoded unless both ends are grpc-core (true binary).
- Our trailers, at most: details 4096 B (5464 base64-encoded) + message
  1024 B + grpc-status, :status, content-type and the per-entry overheads
  (about 300 B): under 6.9 KiB, below 8 KiB with room to spare.
"""
from __future__ import annotations

import functools
import inspect
import logging
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn, TypeAlias, TypeVar

import grpc
from google.protobuf import duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from cirulla.v1.embedded_engine_pb2 import Failure, FieldViolation

log = logging.getLogger("cirulla.server")

MAX_VIOLATIONS = 20          # a garbage request gets a readable answer, not megabytes
MAX_TEXT = 200               # characters of one field path or description (the ellipsis included)
MAX_MESSAGE_BYTES = 1024     # the status message, percent-encoded as grpc-message carries it
MAX_DETAILS_BYTES = 4096     # the serialized google.rpc.Status (see the module's docstring)
ELLIPSIS = "…"
_LISTED_ROOM = 48            # bytes for " [20 of 2147483647 violations listed]" (status_of), and then some

# grpc's handlers and interceptors are generic in grpc-stubs only: subscripted
# for the type checker alone. Of any service: their messages are the service's.
Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"
if TYPE_CHECKING:
    ServerInterceptor: TypeAlias = grpc.ServerInterceptor[Any, Any]
else:
    ServerInterceptor = grpc.ServerInterceptor

Servicer = TypeVar("Servicer")
Request = TypeVar("Request")
Response = TypeVar("Response")


class RpcError(Exception):
    """A call's failure with its status code (and, for a refusal that will pass,
    how many seconds to wait before retrying)."""

    def __init__(self, code: grpc.StatusCode, message: str, *, retry_after: float | None = None):
        message = clip_message(message)
        super().__init__(message)
        self.code = code
        self.message = message
        self.retry_after = retry_after


class BadRequest(RpcError):
    """Bad input: INVALID_ARGUMENT with one field violation per problem (the
    first MAX_VIOLATIONS, each clipped to MAX_TEXT characters; `total` counts
    them all)."""

    def __init__(self, violations: Iterable[tuple[str, str]]):
        every = list(violations)
        self.total = len(every)
        self.violations = [(clip(f), described(clip(f), d)) for f, d in every[:MAX_VIOLATIONS]]
        if not self.violations:
            raise ValueError("a BadRequest names at least one field")
        field, problem = self.violations[0]
        more = f" (and {self.total - 1} more)" if self.total > 1 else ""
        # room kept for the count, and for status_of's note of the violations it lists
        head = clip_message(f"{field}: {problem}" if field else problem, MAX_MESSAGE_BYTES - _LISTED_ROOM - len(more))
        super().__init__(grpc.StatusCode.INVALID_ARGUMENT, head + more)

    @classmethod
    def one(cls, field: str, problem: str) -> BadRequest:
        return cls([(field, problem)])


def json_path(field: str) -> str:
    """A field path in the names of protobuf's JSON mapping: each name in
    lowerCamelCase (the schema gives no field a json_name of its own).

    >>> json_path("view.history[2].deal.hand_sizes[1]")
    'view.history[2].deal.handSizes[1]'
    """
    return re.sub(r"_([a-z0-9])", lambda m: m[1].upper(), field)


def described(field: str, problem: str) -> str:
    """The description of a field's violation: the problem, and the field's
    JSON name where it differs from the proto path (a client that sent JSON
    finds the name it wrote), within MAX_TEXT characters.

    >>> described("budget.time_ms", "-5 is out of range 0..10000")
    '-5 is out of range 0..10000 (JSON: budget.timeMs)'
    >>> described("view.hand[0]", "unknown card 'ZZ'")
    "unknown card 'ZZ'"
    """
    json = json_path(field)
    note = f" (JSON: {json})"
    if json == field or problem.endswith(note) or len(note) > MAX_TEXT // 2:   # (a path that long: garbage)
        return clip(problem)
    return clip(problem, MAX_TEXT - len(note)) + note


def clip(text: str, limit: int = MAX_TEXT) -> str:
    """`text`, cut to `limit` characters with an ellipsis if longer."""
    return text if len(text) <= limit else text[:limit - len(ELLIPSIS)] + ELLIPSIS


def _encoded_size(char: str) -> int:
    """Bytes of a character in grpc-message: UTF-8, each byte outside
    printable ASCII (and '%') percent-encoded as three."""
    return sum(1 if 0x20 <= b <= 0x7E and b != 0x25 else 3 for b in char.encode("utf-8", "surrogatepass"))


def clip_message(message: str, limit: int = MAX_MESSAGE_BYTES) -> str:
    """`message`, cut with an ellipsis so that it takes at most `limit` bytes as grpc-message."""
    if message.isascii() and message.isprintable() and len(message) + 2 * message.count("%") <= limit:
        return message          # most are: a byte a character, '%' three (a refusal's 100 µs, char by char)
    room = limit - _encoded_size(ELLIPSIS)
    size = cut = 0
    for i, char in enumerate(message):
        size += _encoded_size(char)
        if size <= room:
            cut = i + 1
        elif size > limit:
            return message[:cut] + ELLIPSIS
    return message


def status_of(error: RpcError) -> status_pb2.Status:
    """The google.rpc.Status of a failure, with its details, within
    MAX_DETAILS_BYTES: the violations that do not fit are left out, and the
    message says how many are listed."""
    status = status_pb2.Status(code=getattr(code_pb2, error.code.name), message=clip_message(error.message))
    if error.retry_after is not None:
        delay = duration_pb2.Duration()
        delay.FromMilliseconds(max(1, round(error.retry_after * 1000)))
        status.details.add().Pack(error_details_pb2.RetryInfo(retry_delay=delay))
    if isinstance(error, BadRequest):
        listed = _fitting(error, status)
        if listed < error.total:            # BadRequest's message left room for the note
            status.message = clip_message(f"{error.message} [{listed} of {error.total} violations listed]")
        status.details.add().Pack(error_details_pb2.BadRequest(field_violations=[
            error_details_pb2.BadRequest.FieldViolation(field=f, description=d)
            for f, d in error.violations[:listed]]))
    return status


def _fitting(error: BadRequest, status: status_pb2.Status) -> int:
    """How many of the error's violations fit in the details with `status` so far
    (and the room a "[k of n listed]" suffix to the message needs): at least one.
    A violation of MAX_TEXT characters each side takes at most about 1.6 KB,
    and the message 1 KB: the first always fits."""
    bad_request = error_details_pb2.BadRequest()
    budget = MAX_DETAILS_BYTES - status.ByteSize() - _LISTED_ROOM - 16    # 16: the Any's type URL framing
    budget -= len("type.googleapis.com/" + bad_request.DESCRIPTOR.full_name)
    for i, (f, d) in enumerate(error.violations):
        bad_request.field_violations.add(field=f, description=d)
        if bad_request.ByteSize() > budget:
            return max(i, 1)
    return len(error.violations)


def to_status(error: RpcError) -> grpc.Status:
    status = rpc_status.to_status(status_of(error))
    if error.code != grpc.StatusCode.RESOURCE_EXHAUSTED:
        return status
    pushback = -1 if error.retry_after is None else max(1, round(error.retry_after * 1000))
    return _Status(status.code, status.details, (*status.trailing_metadata, (PUSHBACK, str(pushback))))


PUSHBACK = "grpc-retry-pushback-ms"     # gRFC A6: how long a retrying client waits; negative: do not retry


@dataclass(frozen=True)
class _Status(grpc.Status):             # grpc.Status is an interface; abort_with_status reads these three
    code: grpc.StatusCode
    details: str
    trailing_metadata: tuple[tuple[str, str | bytes], ...]


def failure_of(error: BaseException) -> Failure:
    """A failure as a cirulla.v1.Failure (the JSON-lines engine's and the command
    line's --json error): what its gRPC status says, as plain fields."""
    if not isinstance(error, RpcError):
        error = RpcError(grpc.StatusCode.INTERNAL, "internal error; the log has the details")
    failure = Failure(code=error.code.name, message=error.message)
    if isinstance(error, BadRequest):
        failure.field_violations.extend(FieldViolation(field=f, description=d) for f, d in error.violations)
    if error.retry_after is not None:
        failure.retry_delay.FromMilliseconds(max(1, round(error.retry_after * 1000)))
    return failure


def _status(error: grpc.RpcError) -> status_pb2.Status | None:
    """The google.rpc.Status a failed call carries, if any (the RpcError a stub
    raises is the call itself)."""
    if not isinstance(error, grpc.Call):
        return None
    status: status_pb2.Status | None = rpc_status.from_call(error)
    return status


def field_violations(error: grpc.RpcError) -> list[tuple[str, str]]:
    """The BadRequest field violations of a failed call (for clients and tests)."""
    status = _status(error)
    out = []
    for detail in status.details if status else ():
        br = error_details_pb2.BadRequest()
        if detail.Unpack(br):                   # False: another kind of detail
            out += [(v.field, v.description) for v in br.field_violations]
    return out


def retry_delay(error: grpc.RpcError) -> float | None:
    """The google.rpc.RetryInfo delay of a failed call in seconds, if it has one."""
    status = _status(error)
    for detail in status.details if status else ():
        info = error_details_pb2.RetryInfo()
        if detail.Unpack(info):                 # False: another kind of detail
            return info.retry_delay.ToMilliseconds() / 1000
    return None


def refusing(handler: Handler, code: grpc.StatusCode, message: str) -> Handler:
    """A handler of the same shape as `handler` that fails every call (for interceptors)."""
    def refuse(request_or_iterator: object, context: grpc.ServicerContext) -> NoReturn:
        context.abort(code, message)

    if handler.request_streaming and handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(refuse)
    if handler.request_streaming:
        return grpc.stream_unary_rpc_method_handler(refuse)
    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(refuse)
    return grpc.unary_unary_rpc_method_handler(refuse)


def _fail(context: grpc.ServicerContext, error: Exception, method: str) -> NoReturn:
    if isinstance(error, RpcError):
        context.abort_with_status(to_status(error))
    log.exception("%s failed", method)
    context.abort(grpc.StatusCode.INTERNAL, "internal error; the server's log has the details")


def rpc(method: Callable[[Servicer, Request, grpc.ServicerContext], Response]
        ) -> Callable[[Servicer, Request, grpc.ServicerContext], Response]:
    """Map what a unary servicer method raises to a status."""
    if inspect.isgeneratorfunction(method):
        raise TypeError(f"{method.__name__} streams its responses: decorate it with rpc_stream")
    name = method.__name__

    @functools.wraps(method)
    def unary(self: Servicer, request: Request, context: grpc.ServicerContext) -> Response:
        try:
            return method(self, request, context)
        except Exception as e:              # noqa: BLE001 - every failure gets a status
            _fail(context, e, name)
    return unary


def rpc_stream(method: Callable[[Servicer, Request, grpc.ServicerContext], Iterator[Response]]
               ) -> Callable[[Servicer, Request, grpc.ServicerContext], Iterator[Response]]:
    """Map what a server-streaming servicer method raises to a status."""
    name = method.__name__

    @functools.wraps(method)
    def streaming(self: Servicer, request: Request, context: grpc.ServicerContext) -> Iterator[Response]:
        try:
            yield from method(self, request, context)
        except Exception as e:              # noqa: BLE001 - every failure gets a status
            _fail(context, e, name)
    return streaming
