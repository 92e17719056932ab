"""The VAD's level gate: run the model only when there is sound.

Listening to a quiet room, the VAD's model is the agent's biggest idle cost: Silero costs
~0.3 ms of CPU per 32 ms frame on one thread (1.4–1.6 ms on ggml's default four), and the wake
spotter and the recorder each run one. Most frames of a quiet room are the room itself, and a
frame not above the room's level cannot hold speech. So :class:`~anima.listening.vad.GatedVad`
first asks a :class:`LevelGate` (~45 µs: the level in the speech band, :func:`band_db`):

- the floor follows the room's level in the band: it rises ``rise_db_per_s`` on a louder frame
  and falls ``fall_db_per_s`` on a quieter one, so it sits low in the room's own swings and a
  fan that starts becomes the room in a few seconds;
- a frame ``margin_db`` over the floor opens the gate: the model runs on it, and on every frame
  for ``hangover_s`` after the last one that did (a pause inside a sentence, ≤ 1 s, is heard
  as ungated), and on a stream's first ``hangover_s`` (the floor is not known yet);
- a gated frame is "not speech" (probability 0) without the model.

The model's recurrent state is *fed*, not reset: when the gate opens, the model first hears the
last ``GATE_PREROLL`` frames it skipped (~1 s of the room), so it meets the onset as it does
after a stretch of room, not with a state from before the room (with no pre-roll, or 8 frames,
a noise burst started speech once in 240 s where ungated Silero never did; with 32, never).

Measured over ``anima bench turn``'s takes (docs/listening.md, "Voice activity"): its 641 takes
as they are give the same speech starts and ends to the frame but one (a restart 32 ms later)
and the same turn ends. After 3 s of a quiet room (voice −30…−45 dBFS, room −55…−60; 480 runs)
the gated model never missed an utterance the ungated one heard (13 the other way) and started
speech earlier in 246, later in 4: Silero that has listened to seconds of room is slower to
call a soft voice.

Idle cost, a quiet room (pink noise, −55 dBFS), two cores: the VAD alone 0.05 ms of CPU per
frame (0.16 % of a core) against 0.34 ms ungated on one thread and 1.3–1.6 ms on ggml's four;
``anima serve --agent`` hearing it, the whole process 10.3–10.7 % → 4.8–5.1 % of a core.
"""

from __future__ import annotations

import math

import numpy as np

from anima.audio import FRAME_S, FRAME_SAMPLES, SAMPLE_RATE, Frame

# listen.vad_gate_db's default: the margin (dB) over the room's floor that opens the gate
VAD_GATE_DB = 3.0
GATE_HANGOVER_S = 1.0  # the model runs this long after the last frame above the gate
GATE_RISE_DB_PER_S = 3.0  # how fast the floor follows a room that gets louder
GATE_FALL_DB_PER_S = 12.0  # and a room that gets quieter: 4× faster, so it sits low in the room
# skipped frames (~1 s) the model hears before the one that opens the gate: with 8 (0.26 s) a
# noise burst after a long quiet started speech once in 240 s of room, with 32 never (as ungated)
GATE_PREROLL = 32
GATE_BAND_HZ = (300, 4000)  # the band the gate listens in: speech's formants, not a fan's rumble
_BINS = slice(*(round(hz * FRAME_SAMPLES / SAMPLE_RATE) for hz in GATE_BAND_HZ))
_WINDOW = np.hanning(FRAME_SAMPLES)


def frame_db(frame: Frame) -> float:
    """The frame's RMS level in dBFS (−100 for digital silence)."""
    rms = math.sqrt(float(np.mean(np.square(frame, dtype=np.float64)))) if len(frame) else 0.0
    return 20 * math.log10(max(rms, 1e-5) / 32768.0)


def band_db(frame: Frame) -> float:
    """The frame's level in :data:`GATE_BAND_HZ` (dBFS, −100 for silence; ~45 µs). A room's
    rumble has most of its power below the band, and its level from frame to frame swings by
    several dB (few cycles in 32 ms): the whole frame's level would open the gate on the room
    itself (pink noise at −55 dBFS: 3 dB over a floor at the quietest frames on 20–30 % of
    frames; in the band, with :class:`LevelGate`'s floor, on none in 60 s)."""
    if len(frame) != FRAME_SAMPLES:
        return frame_db(frame)
    spectrum = np.fft.rfft(frame * _WINDOW)[_BINS]
    # one-sided spectrum (×2) of a Hann window (mean square 0.375): the band's mean power
    power = 2 * float(np.sum(spectrum.real**2 + spectrum.imag**2)) / (0.375 * FRAME_SAMPLES**2)
    return 10 * math.log10(max(power / 32768.0**2, 1e-10))


class LevelGate:
    """Sans-IO: :meth:`open` says whether a frame needs the model (see the module docstring)."""

    def __init__(
        self,
        margin_db: float = VAD_GATE_DB,
        *,
        hangover_s: float = GATE_HANGOVER_S,
        rise_db_per_s: float = GATE_RISE_DB_PER_S,
        fall_db_per_s: float = GATE_FALL_DB_PER_S,
    ) -> None:
        self.margin_db = margin_db
        self.hangover_frames = max(1, math.ceil(hangover_s / FRAME_S - 1e-9))
        self._rise = rise_db_per_s * FRAME_S
        self._fall = fall_db_per_s * FRAME_S
        self.floor_db: float | None = None  # the room's level in the band; None until a frame
        self._left = self.hangover_frames  # frames the model still runs without sound

    def reset(self) -> None:
        self.floor_db = None
        self._left = self.hangover_frames

    def open(self, frame: Frame) -> bool:
        level = band_db(frame)
        floor = self.floor_db
        if floor is None:
            floor = level
        elif level > floor:
            floor = min(level, floor + self._rise)
        else:
            floor = max(level, floor - self._fall)
        self.floor_db = floor
        if level >= floor + self.margin_db:
            self._left = self.hangover_frames
            return True
        if self._left > 0:
            self._left -= 1
            return True
        return False
