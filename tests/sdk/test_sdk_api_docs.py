"""docs/api.md is generated from the docstrings: the committed file must match them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_api_reference_is_up_to_date() -> None:
    spec = importlib.util.spec_from_file_location("gen_api_docs", ROOT / "scripts/gen_api_docs.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    committed = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert committed == module.render(), "run: python scripts/gen_api_docs.py"
    assert "#### `say(text" in committed
    assert "RobotNotConnectedError" in committed
