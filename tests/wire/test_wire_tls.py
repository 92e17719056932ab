"""The HTTP clients' shared TLS context (anima/wire/tls.py)."""

from __future__ import annotations

import ssl

import pytest

from anima.agent.planners.http import new_client
from anima.wire.tls import client_tls

pytestmark = pytest.mark.fast


def test_one_verifying_context_is_made_and_shared() -> None:
    ctx = client_tls()
    assert ctx is client_tls()  # made once: loading the authorities costs ~0.13 s each time
    assert ctx.verify_mode is ssl.CERT_REQUIRED
    assert ctx.check_hostname
    assert ctx.cert_store_stats()["x509_ca"] > 10  # the authorities are loaded


def test_a_planners_client_verifies_with_it() -> None:
    with new_client(5.0) as client:
        pool = client._transport._pool  # type: ignore[attr-defined]
        assert pool._ssl_context is client_tls()
