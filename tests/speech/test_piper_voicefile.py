"""The voice's optimised graph is saved once and opened unoptimised after (voicefile.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from anima.speech.piper.voice import voice_files
from anima.speech.piper.voicefile import aligned_model, open_session, optimised_path

pytestmark = pytest.mark.model


@pytest.fixture
def aligned(tmp_path: Path) -> Path:
    """The bundled voice's aligned copy, linked into a folder of the test's own."""
    model, _config = voice_files(None, None)
    linked = tmp_path / aligned_model(model).name
    linked.symlink_to(aligned_model(model))
    return linked


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Each session onnxruntime is asked for: (the file, its optimisation level)."""
    import onnxruntime

    calls: list[tuple[str, str]] = []
    real = onnxruntime.InferenceSession

    def recording(path: str, sess_options: Any, **kwargs: Any) -> Any:
        calls.append((Path(path).name, sess_options.graph_optimization_level.name))
        return real(path, sess_options=sess_options, **kwargs)

    monkeypatch.setattr(onnxruntime, "InferenceSession", recording)
    return calls


def _speaks(session: Any) -> None:
    import numpy as np

    inputs = {i.name for i in session.get_inputs()}
    feed: dict[str, Any] = {
        "input": np.array([[1, 20, 40, 2]], dtype=np.int64),
        "input_lengths": np.array([4], dtype=np.int64),
        "scales": np.array([0.667, 1.0, 0.8], dtype=np.float32),
    }
    audio = session.run(None, {k: v for k, v in feed.items() if k in inputs})[0]
    assert audio.size > 0


def test_the_first_load_saves_the_optimised_graph_and_the_next_opens_it(
    aligned: Path, opened: list[tuple[str, str]]
) -> None:
    import onnxruntime

    saved = optimised_path(aligned, onnxruntime.__version__)
    assert not saved.exists()
    _speaks(open_session(aligned))
    assert saved.is_file()
    assert not list(aligned.parent.glob("*.tmp.onnx"))  # written aside, then renamed
    _speaks(open_session(aligned))
    assert opened == [(aligned.name, "ORT_ENABLE_ALL"), (saved.name, "ORT_DISABLE_ALL")]


def test_a_damaged_saved_graph_is_made_again(aligned: Path, opened: list[tuple[str, str]]) -> None:
    import onnxruntime

    saved = optimised_path(aligned, onnxruntime.__version__)
    saved.write_bytes(b"not a model")
    _speaks(open_session(aligned))
    assert opened == [(saved.name, "ORT_DISABLE_ALL"), (aligned.name, "ORT_ENABLE_ALL")]
    assert saved.stat().st_size > 1_000_000  # the voice's graph again


def test_the_saved_graph_is_named_for_the_onnxruntime_version(tmp_path: Path) -> None:
    aligned = tmp_path / "voice-aligned.onnx"
    assert optimised_path(aligned, "1.20.0") != optimised_path(aligned, "1.21.0")
    assert optimised_path(aligned, "1.20.0").parent == tmp_path
