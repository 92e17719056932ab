"""`anima agent --audio-in FILE`: what `anima serve --audio-in` refuses, refused the same way
(issue 30: a FIFO hung the start, a header saying 1 Hz asked for gigabytes)."""

from __future__ import annotations

import os
import struct
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from anima.cli import app
from anima.listening.sources import write_wav

pytestmark = pytest.mark.fast


def test_anima_agent_refuses_a_fifo_and_an_absurd_rate_in_one_line(tmp_path: Path) -> None:
    fifo = tmp_path / "voice.wav"
    os.mkfifo(fifo)
    odd = tmp_path / "odd.wav"
    write_wav(odd, np.zeros(1000, np.int16))
    data = bytearray(odd.read_bytes())
    data[24:32] = struct.pack("<II", 1, 2)
    odd.write_bytes(bytes(data))
    runner = CliRunner()
    for path, said in ((fifo, "a FIFO, not a WAV file"), (odd, "a sample rate of 1 Hz")):
        t0 = time.monotonic()
        result = runner.invoke(app, ["agent", "--audio-in", str(path)], env={"ANIMA_CONFIG": ""})
        assert result.exit_code == 2, result.output
        assert said in result.output
        assert time.monotonic() - t0 < 5  # refused before a broker or a model is touched
