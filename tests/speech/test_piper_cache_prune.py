"""The Piper cache's pruning: copies of the voice unused for a month and writes a crash left go
when another copy is made; a voice model itself never does."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from anima.speech.piper.voicefile import prune

pytestmark = pytest.mark.fast


def test_copies_unused_for_a_month_and_crashed_writes_are_pruned(tmp_path: Path) -> None:
    def made(name: str, days_ago: float) -> Path:
        path = tmp_path / name
        path.write_bytes(b"x")
        when = time.time() - days_ago * 86400
        os.utime(path, (when, when))
        return path

    keep = made("voice-aaaa-aligned.onnx", 0)
    old = made("voice-bbbb-aligned.onnx", 40)
    old_graph = made("voice-bbbb-aligned-ort-cccc.onnx", 31)
    recent = made("voice-dddd-aligned-ort-eeee.onnx", 10)
    crashed = made("voice-ffff-aligned.123.tmp", 2)
    writing = made("voice-aaaa-aligned-ort-cccc.456.tmp.onnx", 0.01)  # another worker's, now
    model = made("voice.onnx", 400)  # a voice model itself is never pruned
    old_kept = made("voice-gggg-aligned.onnx", 40)
    removed = prune(tmp_path, keep=old_kept)
    assert sorted(removed) == sorted([old, old_graph, crashed])
    assert all(p.exists() for p in (keep, recent, writing, model, old_kept))
