"""adam_control.RobotControl's handlers, each decoding its own request.

gRPC's generated ``add_RobotControlServicer_to_server`` hands each request to protobuf's
``FromString`` inside gRPC, where a request that does not decode is logged with a traceback
(``grpc._common``: "Exception deserializing request!") and answered ``INTERNAL``. Here every
handler takes the raw bytes and decodes them itself: garbage is answered ``INVALID_ARGUMENT``
saying which message it is not, and logged in one line (WARNING for the first of each RPC, DEBUG
after it: a flood of garbage does not flood the log). The services gRPC itself decodes (health
checking, reflection) still answer garbage ``INTERNAL``; :func:`one_line_decode_errors` makes
gRPC's log of it one line too.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from anima.humanoid import adam_control_pb2 as pb

log = logging.getLogger(__name__)

Handler = Callable[[Any, grpc.ServicerContext], Any]


class _Refusals:
    """How many undecodable requests each RPC got (the first is logged at WARNING)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts: dict[str, int] = {}

    def count(self, rpc: str) -> int:
        with self._lock:
            n = self.counts[rpc] = self.counts.get(rpc, 0) + 1
        return n


def decoding(rpc: str, kind: Any, handler: Handler, refused: _Refusals) -> Handler:
    """``handler`` behind a decoder of ``kind`` (a generated message class) that refuses
    garbage with ``INVALID_ARGUMENT`` (counted in ``refused``)."""
    name = kind.DESCRIPTOR.full_name

    def call(raw: bytes, context: grpc.ServicerContext) -> Any:
        try:
            request = kind.FromString(raw)
        except DecodeError as exc:
            n = refused.count(rpc)
            level = logging.WARNING if n == 1 else logging.DEBUG
            log.log(
                level,
                "%s: refused %d bytes from %s that do not decode as %s (%s)%s",
                rpc,
                len(raw),
                context.peer(),
                name,
                exc,
                "" if n == 1 else f" [{n} so far]",
            )
            context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, f"{rpc}: the request is not a valid {name}"
            )
        return handler(request, context)

    return call


class _OneLine(logging.Filter):
    """gRPC's "Exception deserializing message!" with its traceback → one line, the error."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and str(record.msg).startswith("Exception deserializing"):
            exc = record.exc_info[1]
            record.msg = f"{record.getMessage()} ({type(exc).__name__}: {exc})"
            record.args = ()
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


_ONE_LINE = _OneLine()


def one_line_decode_errors() -> None:
    """Make gRPC's own log of a request it could not decode one line (idempotent)."""
    logging.getLogger("grpc._common").addFilter(_ONE_LINE)


def add_robot_control(servicer: object, server: grpc.Server) -> None:
    """Serve ``servicer``'s methods as adam_control.RobotControl, each decoding its request."""
    service = pb.DESCRIPTOR.services_by_name["RobotControl"]
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    refused = _Refusals()  # this server's
    for method in service.methods:
        request = getattr(pb, method.input_type.name)
        response = getattr(pb, method.output_type.name)
        handlers[method.name] = grpc.unary_unary_rpc_method_handler(
            decoding(method.name, request, getattr(servicer, method.name), refused),
            request_deserializer=None,
            response_serializer=response.SerializeToString,
        )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(service.full_name, handlers),)
    )
    server.add_registered_method_handlers(service.full_name, handlers)
