"""Pollen's Reachy Mini daemon with its ReSpeaker array replaced by a scripted one, for the
tests of anima's reading of the daemon's direction of arrival (docs/attention.md).

Run by the daemon's own interpreter (``.venv-reachy/bin/python``), never imported by anima: it
imports nothing from anima. ``ANIMA_REACHY_DOA_FILE`` names a JSON file holding
``{"angle": <rad>, "speech_detected": <bool>}`` (or ``null``: no reading); each of the daemon's
reads of the array (10 a second) reads that file afresh, so a test moves the talker by
rewriting it. The daemon creates its array's reader only with media on, and the mockup runs
with ``--no-media``: the backend is given one all the same. Then the daemon's own entry point
(``reachy-mini-daemon``) runs with the arguments given.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from reachy_mini.daemon.app.main import main
from reachy_mini.daemon.backend import abstract
from reachy_mini.media import audio_doa

DOA_FILE = Path(os.environ["ANIMA_REACHY_DOA_FILE"])


class ScriptedReSpeaker:
    """The part of ``reachy_mini.media.audio_control_utils.ReSpeaker`` the daemon's
    direction of arrival uses: ``read("DOA_VALUE_RADIANS")`` → ``[angle, speech]``."""

    def read(self, name: str) -> list[float] | None:
        if name != "DOA_VALUE_RADIANS":
            return None
        try:
            data = json.loads(DOA_FILE.read_text())
        except (OSError, ValueError):
            return None  # being rewritten, or absent: the array gave nothing this time
        if not isinstance(data, dict):
            return None
        return [float(data["angle"]), 1.0 if data["speech_detected"] else 0.0]

    def close(self) -> None:
        pass


def scripted() -> ScriptedReSpeaker:
    return ScriptedReSpeaker()


audio_doa.init_respeaker_usb = scripted  # AudioDoA() probes through this module's name
_backend_init = abstract.Backend.__init__


def _with_doa(self: Any, *args: Any, **kwargs: Any) -> None:
    _backend_init(self, *args, **kwargs)
    if self.doa is None:  # --no-media: the array's reader all the same
        self.doa = audio_doa.AudioDoA()


abstract.Backend.__init__ = _with_doa

if __name__ == "__main__":
    sys.exit(main())
