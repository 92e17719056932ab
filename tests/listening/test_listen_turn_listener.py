"""End of turn through the real Listener: `listen.turn` picks the detector, the recorder's
partials reach it, and the round ends when it says (positions in the stream: audio time)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from anima.audio import SAMPLE_RATE

pytestmark = pytest.mark.model

SMALL = {"asr": "pocketsphinx", "wake_word": False}
LEAD_S = 0.4


def _round_delay_s(h: Any, speech: np.ndarray) -> float:
    """Wake, speak, wait: how long after the last loud sample the round was decided."""
    h.silence(LEAD_S)
    h.sync()
    h.listener.wake()
    h.push(speech)
    h.silence(2.0)
    assert h.rounds_done(1)
    r = h.heard.rounds[0].round
    assert r.endpoint_position is not None
    loud = np.flatnonzero(np.abs(speech.astype(np.int32)) > 0.02 * np.abs(speech).max())
    speech_end = round(LEAD_S * SAMPLE_RATE) + int(loud[-1]) + 1
    return float((r.endpoint_position - speech_end) / SAMPLE_RATE)


@pytest.mark.parametrize(("turn", "bounds"), [("auto", (0.1, 0.35)), ("silence", (0.8, 1.0))])
def test_the_configured_turn_ends_the_round(
    listen: Any, espeak: Any, say: Any, turn: str, bounds: tuple[float, float]
) -> None:
    """ "say hello" falls to the bottom of eSpeak's register at its end ("look at me" falls on
    "look" and stays low: a fall from its top, which waits the endpoint, 0.8 s)."""
    h = listen(turn=turn, **SMALL)
    delay = _round_delay_s(h, say(espeak, "say hello"))
    assert len(h.heard.finals) == 1  # (what pocketsphinx heard is not the point here)
    assert bounds[0] <= delay <= bounds[1], delay


def test_partials_reach_the_turn_detector(listen: Any, espeak: Any, say: Any) -> None:
    h = listen(turn="cues", **SMALL)
    turn = h.listener._recorder.detector.turn  # the detector the listener made from the config
    seen: list[str] = []
    forward = turn.partial
    turn.partial = lambda text: (seen.append(text), forward(text))[-1]
    _round_delay_s(h, say(espeak, "look at me"))
    assert h.heard.partials
    assert seen == h.heard.partials  # each partial the listener reported, in order


def test_the_turn_silences_of_the_config_reach_the_listener(listen: Any) -> None:
    h = listen(turn="cues", turn_quick_s=0.3, turn_hold_s=2.0, endpoint_silence_s=0.6, **SMALL)
    turn = h.listener._recorder.detector.turn
    assert (turn.name, turn.quick_s, turn.hold_s, turn.middle_s) == ("cues", 0.3, 2.0, 0.6)
    h = listen(turn="silence", endpoint_silence_s=0.6, **SMALL)
    assert h.listener._recorder.detector.turn.end_s == 0.6
