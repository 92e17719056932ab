"""A request that is not protobuf: INVALID_ARGUMENT and one log line, not gRPC's traceback
(issue 30: "Exception deserializing request!" with a traceback, answered INTERNAL)."""

from __future__ import annotations

import logging

import grpc
import pytest

from .conftest import Served

pytestmark = pytest.mark.fast

GARBAGE = b"\xff\xff\xff\xff"  # a field of wire type 7: no protobuf message decodes it


def _raw(served: Served, rpc: str) -> grpc.UnaryUnaryMultiCallable:
    return served.channel.unary_unary(
        f"/adam_control.RobotControl/{rpc}",
        request_serializer=lambda b: b,
        response_deserializer=lambda b: b,
    )


def test_a_garbage_request_is_invalid_argument_in_one_log_line(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with pytest.raises(grpc.RpcError) as info:
        _raw(served, "SetMode")(GARBAGE, timeout=5.0)
    assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    details = info.value.details()  # type: ignore[attr-defined]
    assert details == "SetMode: the request is not a valid adam_control.SetModeRequest"
    with pytest.raises(grpc.RpcError):
        _raw(served, "SetMode")(GARBAGE, timeout=5.0)  # a second: DEBUG, counted
    assert served.state().success  # still serving
    assert [r for r in caplog.records if r.exc_info] == []  # no traceback
    said = [
        r
        for r in caplog.records
        if "do not decode as adam_control.SetModeRequest" in r.getMessage()
    ]
    assert [r.levelno for r in said] == [logging.WARNING, logging.DEBUG]
    assert "\n" not in said[0].getMessage()
    assert said[0].getMessage().startswith("SetMode: refused 4 bytes from ")


def test_garbage_to_the_health_service_is_one_log_line_too(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    raw = served.channel.unary_unary(
        "/grpc.health.v1.Health/Check",
        request_serializer=lambda b: b,
        response_deserializer=lambda b: b,
    )
    with pytest.raises(grpc.RpcError):
        raw(GARBAGE, timeout=5.0)  # gRPC decodes it: INTERNAL, as gRPC answers
    assert [r for r in caplog.records if r.exc_info] == []  # no traceback
    said = [r for r in caplog.records if "Exception deserializing" in r.getMessage()]
    assert len(said) == 1
    assert "DecodeError" in said[0].getMessage()
