"""Errors on the wire: google.rpc.Status with the conventional details.

Servicers raise; the `rpc` decorator (`rpc_stream` for a server-streaming
method) turns what they raise into a status:
- BadRequest (bad input) -> INVALID_ARGUMENT with google.rpc.BadRequest field
  violations, e.g. `view.hand[2]`: unknown card 'ZZ';
- RpcError(code, message) -> that code (RESOURCE_EXHAUSTED, UNAVAILABLE...),
  with a google.rpc.RetryInfo when it says when to retry;
- anything else -> INTERNAL, logged with its traceback, never shown to the caller.
"""
from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn, TypeAlias, TypeVar

import grpc
from google.protobuf import duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from cirulla.v1.embedded_engine_pb2 import Failure, FieldViolation

log = logging.getLogger("cirulla.server")

MAX_VIOLATIONS = 20          # a garbage request gets a readable answer, not megabytes

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
        super().__init__(message)
        self.code = code
        self.message = message
        self.retry_after = retry_after


class BadRequest(RpcError):
    """Bad input: INVALID_ARGUMENT with one field violation per problem."""

    def __init__(self, violations: Iterable[tuple[str, str]]):
        self.violations = list(violations)[:MAX_VIOLATIONS]
        if not self.violations:
            raise ValueError("a BadRequest names at least one field")
        field, problem = self.violations[0]
        more = f" (and {len(self.violations) - 1} more)" if len(self.violations) > 1 else ""
        super().__init__(grpc.StatusCode.INVALID_ARGUMENT, f"{field}: {problem}{more}" if field else problem + more)

    @classmethod
    def one(cls, field: str, problem: str) -> BadRequest:
        return cls([(field, problem)])


def status_of(error: RpcError) -> status_pb2.Status:
    """The google.rpc.Status of a failure, with its details."""
    status = status_pb2.Status(code=getattr(code_pb2, error.code.name), message=error.message)
    if isinstance(error, BadRequest):
        status.details.add().Pack(error_details_pb2.BadRequest(field_violations=[
            error_details_pb2.BadRequest.FieldViolation(field=f, description=d)
            for f, d in error.violations]))
    if error.retry_after is not None:
        delay = duration_pb2.Duration()
        delay.FromMilliseconds(max(1, round(error.retry_after * 1000)))
        status.details.add().Pack(error_details_pb2.RetryInfo(retry_delay=delay))
    return status


def to_status(error: RpcError) -> grpc.Status:
    return rpc_status.to_status(status_of(error))


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
