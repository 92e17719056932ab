"""Schema-driven fuzzing of the REST API (schemathesis): no request gets a 500.

Cases come from schemathesis's strategies driven by hypothesis directly (its pytest plugin does
not run under this pytest); a bounded number of examples per operation.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable

from anima.frontdoors.web import WebFrontDoor
from anima.runtime import Runtime

pytestmark = [
    pytest.mark.integration,
    # a named exception: hypothesis notes any change of the global random state while it draws,
    # and here a live server's threads run beside the draws (rich's import was one such caller,
    # now imported up front in tests/conftest.py; another, not yet found, fails a run now and then)
    pytest.mark.filterwarnings(
        "ignore:Do not use the `random` module inside strategies"
        ":hypothesis.errors.HypothesisDeprecationWarning"
    ),
]

schemathesis = pytest.importorskip("schemathesis", reason="pip install schemathesis")

Robot = tuple[Runtime, WebFrontDoor]


@pytest.fixture(scope="module")
def served() -> Iterator[WebFrontDoor]:
    from .conftest import serving, web_config

    with serving(web_config()) as (_, door):
        yield door


# examples per operation and mode: 12 × 2 modes × ~40 operations, ~1,000 calls (25 were ~2,000:
# 25 s alone, 130 s beside five workers in a slow hour of the machine, the suite's longest
# test); ANIMA_FUZZ_EXAMPLES raises it for a deeper run of its own.
EXAMPLES = int(os.environ.get("ANIMA_FUZZ_EXAMPLES", "12"))


@pytest.mark.timeout(360)
def test_no_request_is_a_server_error(served: WebFrontDoor) -> None:
    schema = schemathesis.openapi.from_url(served.url + "openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10
    calls = 0
    for operation, mode in itertools.product(operations, schemathesis.GenerationMode):

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
        def call(case: Any) -> None:
            nonlocal calls
            calls += 1
            response = case.call(timeout=5)
            label = f"{case.method} {case.path}"
            assert response.status_code < 500, (label, response.text)
            assert response.status_code in (200, 202, 400, 409), (label, response.text)

        try:
            call()
        except Unsatisfiable:  # nothing to break in an operation without parameters or body
            assert mode is schemathesis.GenerationMode.NEGATIVE
    assert calls >= 100
    assert served.rejected > 0  # the fuzz reached the shared parsers
