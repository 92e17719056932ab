"""Arguments a model writes that no float can hold: refused by name, never an OverflowError."""

from __future__ import annotations

import pytest

from anima.agent.plan import parse_plan, step_from_values
from anima.agent.vocabulary import builtin_registry
from anima.errors import PlanError

pytestmark = pytest.mark.fast

HUGE = "9" * 400


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        (f"look_at({HUGE}, 0, 0)", "x must be a finite number, got int 9999999999"),
        (f"look_at(-{HUGE}, 0, 0)", "x must be a finite number, got int -999999999"),
        (f"wait({HUGE})", "seconds must be a finite number"),
    ],
)
def test_a_400_digit_number_in_a_plan_is_refused_by_name(source: str, reason: str) -> None:
    registry = builtin_registry(animations=["nod"], postures=[])
    with pytest.raises(PlanError) as info:
        parse_plan(registry, [source])
    message = str(info.value)
    assert reason in message
    assert len(message) < 300  # an excerpt of the value, not its 400 digits


def test_a_400_digit_tool_argument_is_refused_by_name() -> None:
    registry = builtin_registry(animations=["nod"], postures=[])
    with pytest.raises(PlanError, match="seconds must be a finite number") as info:
        step_from_values(registry["wait"], {"seconds": int(HUGE)})
    assert len(str(info.value)) < 300
