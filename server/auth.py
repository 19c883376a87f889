"""Bearer-token authentication: `authorization: Bearer TOKEN` on every call.

Health checks stay open, so that load balancers and orchestrators can probe
the server without the secret; they reveal nothing but SERVING.

Without the right token every other call gets UNAUTHENTICATED, a method the
server does not have included: only a caller with the token learns that a
method does not exist (UNIMPLEMENTED), so the method names cannot be probed
without it. (An unknown method of the open health service is UNIMPLEMENTED
for anyone.)
"""
from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import NoReturn

import grpc

from .errors import Handler, ServerInterceptor, refusing

OPEN_SERVICES = ("/grpc.health.v1.Health/",)
REFUSAL = "this server needs 'authorization: Bearer <token>' with its token"


class BearerTokenInterceptor(ServerInterceptor):
    def __init__(self, token: str):
        self._expected = f"Bearer {token}".encode()

    def intercept_service(self, continuation: Callable[[grpc.HandlerCallDetails], Handler | None],
                          details: grpc.HandlerCallDetails) -> Handler | None:
        if details.method.startswith(OPEN_SERVICES):
            return continuation(details)
        given = dict(details.invocation_metadata).get("authorization", "")
        if isinstance(given, str):
            given = given.encode()
        # constant time: the comparison must not tell how much of a guess was right
        if hmac.compare_digest(given, self._expected):
            return continuation(details)
        handler = continuation(details)
        if handler is None:                 # an unknown method: refused like any other
            return grpc.stream_stream_rpc_method_handler(_refuse)
        return refusing(handler, grpc.StatusCode.UNAUTHENTICATED, REFUSAL)


def _refuse(requests: object, context: grpc.ServicerContext) -> NoReturn:
    """Refuse a call of any shape: a bidi-streaming handler reads no request
    before it answers, which every kind of client accepts."""
    context.abort(grpc.StatusCode.UNAUTHENTICATED, REFUSAL)
