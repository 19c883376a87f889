"""Bearer-token authentication: `authorization: Bearer TOKEN` on every call.

Health checks stay open, so that load balancers and orchestrators can probe
the server without the secret; they reveal nothing but SERVING.
"""
from __future__ import annotations

import hmac
from collections.abc import Callable

import grpc

from .errors import Handler, ServerInterceptor, refusing

OPEN_SERVICES = ("/grpc.health.v1.Health/",)


class BearerTokenInterceptor(ServerInterceptor):
    def __init__(self, token: str):
        self._expected = f"Bearer {token}".encode()

    def intercept_service(self, continuation: Callable[[grpc.HandlerCallDetails], Handler | None],
                          details: grpc.HandlerCallDetails) -> Handler | None:
        handler = continuation(details)
        if handler is None or details.method.startswith(OPEN_SERVICES):
            return handler
        given = dict(details.invocation_metadata).get("authorization", "")
        if isinstance(given, str):
            given = given.encode()
        # constant time: the comparison must not tell how much of a guess was right
        if hmac.compare_digest(given, self._expected):
            return handler
        return refusing(handler, grpc.StatusCode.UNAUTHENTICATED,
                        "this server needs 'authorization: Bearer <token>' with its token")
