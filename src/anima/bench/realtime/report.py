"""``anima bench realtime``: the session's figures (:mod:`anima.bench.realtime.session`) and the
voice's (:mod:`anima.bench.realtime.voice`), as lines and as JSON, each with the issue's target.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from anima.bench.measure import percentile
from anima.bench.realtime.barge import BargeFigures
from anima.bench.realtime.gemini import GeminiFigures, run_gemini_bench
from anima.bench.realtime.onset import OnsetFigures, run_onset_bench
from anima.bench.realtime.session import SessionFigures, run_session_bench
from anima.bench.realtime.voice import VoiceFigures, run_voice_bench


@dataclass(kw_only=True)
class RealtimeReport:
    session: SessionFigures
    gemini: GeminiFigures  # the same person over a Gemini Live answer sent whole
    voice: VoiceFigures
    onset: OnsetFigures | None  # the yield's onset with listen.vad's VAD (None: --quick)
    load: tuple[float, float, float]  # the machine's load averages when it ran

    def figures(self) -> dict[str, float | None]:
        """Every figure the lines print, by name (None: not measured)."""
        s, v = self.session, self.voice
        out: dict[str, float | None] = {
            "tool_to_frame_p50_ms": _p(s.tool_to_frame_ms, 50),
            "tool_to_frame_p95_ms": _p(s.tool_to_frame_ms, 95),
            "direct_to_frame_p50_ms": _p(s.direct_to_frame_ms, 50),
            "first_sample_p50_ms": _p(v.first_sample_ms, 50),
            "first_sample_p95_ms": _p(v.first_sample_ms, 95),
            "lips_worst_ms": max((abs(x) for x in v.av_offset_ms), default=None),
            "missed_ticks": float(s.missed_ticks),
        }
        if self.onset is not None:
            out["onset_either_p95_ms"] = _p(self.onset.either_ms, 95)
            out["onset_vad_alone_p95_ms"] = _p(self.onset.vad_ms, 95)
        out["gemini_missed_ticks"] = float(self.gemini.missed_ticks)
        for b in self.gemini.barge:
            key = "gemini_" + b.condition.replace(" ", "_")
            out[f"{key}_onset_to_stop_p95_ms"] = _p(b.onset_to_stop_ms, 95)
            out[f"{key}_stops"] = float(b.stopped)
            out[f"{key}_paused_p95_ms"] = _p(b.paused_ms, 95)
            out[f"{key}_onset_to_cut_p95_ms"] = _p(b.onset_to_cut_ms, 95)
        for b in s.barge:
            key = b.condition.replace(" ", "_")
            out[f"{key}_false_onsets"] = float(b.false_onsets)
            if b.condition in ("backchannel", "echo"):
                out[f"{key}_stops"] = float(b.stopped)
                out[f"{key}_paused_p50_ms"] = _p(b.paused_ms, 50)
                out[f"{key}_paused_p95_ms"] = _p(b.paused_ms, 95)
                continue
            out[f"{key}_onset_to_stop_p95_ms"] = _p(b.onset_to_stop_ms, 95)
            out[f"{key}_onset_to_cut_p95_ms"] = _p(b.onset_to_cut_ms, 95)
            out[f"{key}_rule_to_stop_p95_ms"] = _p(b.rule_to_stop_ms, 95)
            out[f"{key}_end_error_worst_ms"] = max((abs(x) for x in b.end_error_ms), default=None)
        return out


def run_realtime_bench(*, quick: bool = False) -> RealtimeReport:
    session = run_session_bench(1 if quick else 20)
    gemini = run_gemini_bench(1 if quick else 20)
    voice = run_voice_bench(1 if quick else 8, seconds=0.6 if quick else 2.0)
    onset = None if quick else run_onset_bench()  # the Piper voice and Silero: seconds to load
    return RealtimeReport(
        session=session, gemini=gemini, voice=voice, onset=onset, load=os.getloadavg()
    )


def report_lines(r: RealtimeReport) -> list[str]:
    s, v = r.session, r.voice
    lines = [
        f"machine: {os.cpu_count()} cores, load average {r.load[0]:.1f} / {r.load[1]:.1f}",
        f"tool call → first moving frame : {_ms(s.tool_to_frame_ms)} (target p95 ≤ 50 ms)",
        f"  nod executed directly → frame  : {_ms(s.direct_to_frame_ms)} (its own still "
        "first frames)",
        f"first audio delta → first sample: {_ms(v.first_sample_ms)} (target ≤ 60 ms; "
        f"{v.delta_ms} ms deltas)",
        f"lips against the audio          : {_ms(v.av_offset_ms)} (> 0: the mouth lags; "
        "target within 40 ms)",
    ]
    for b in s.barge:
        false = f"; {b.false_onsets} false onsets resumed" if b.false_onsets else ""
        if b.condition in ("backchannel", "echo"):
            lines += [
                f"barge-in, {b.condition:<22}: stopped the robot {b.stopped} of {b.trials}"
                f" (target 0); paused {b.paused}" + false
                + (f"; {b.early} cut before the voice began" if b.early else ""),
                f"  paused until it resumed        : {_ms(b.paused_ms)}",
            ]  # fmt: skip
            continue
        lines += [
            f"barge-in, {b.condition:<21}: stopped {b.stopped} of {b.trials}, paused at the "
            f"onset {b.paused}" + false
            + (f" ({b.early} cut before the voice began)" if b.early else "")
            + f"; voice onset → playback stopped {_ms(b.onset_to_stop_ms)} (target p95 ≤ 100 ms)",
            f"  voice onset → cut (the rule)   : {_ms(b.onset_to_cut_ms)}",
            f"  the rule's evidence → cut      : {_ms(b.rule_to_stop_ms)}",
            f"  audio_end_ms − sink's played   : {_ms(b.end_error_ms)} (target within ±20 ms)",
        ]  # fmt: skip
    lines.append(
        f"the loop while streaming both ways: {s.missed_ticks} missed of {s.ticks} ticks (target 0)"
    )
    g = r.gemini
    lines.append("gemini_live, the answer sent whole (no interrupted comes), anima's VAD decides:")
    for b in g.barge:
        lines += _gemini_lines(b)
    lines.append(
        f"the loop while Gemini streams    : {g.missed_ticks} missed of {g.ticks} ticks (target 0)"
    )
    o = r.onset
    if o is None:
        lines.append("yield onset with listen.vad's VAD: skipped with --quick (the Piper voice)")
    else:
        lines += [
            f"yield onset, Piper's voice, {o.vad} VAD or the level (the rules'): "
            f"{_ms(o.either_ms)}; never: {o.missed} (+ ~1 ms to the pause)",
            f"  the {o.vad} VAD alone              : {_ms(o.vad_ms)}",
            f"  the level alone                  : {_ms(o.level_ms)}",
        ]
    return lines


def _gemini_lines(b: BargeFigures) -> list[str]:
    false = f"; {b.false_onsets} false onsets resumed" if b.false_onsets else ""
    early = f"; {b.early} cut before the voice began" if b.early else ""
    head = f"gemini barge-in, {b.condition:<16}"
    if b.condition in ("backchannel", "echo"):
        return [
            f"{head}: stopped the robot {b.stopped} of {b.trials} (target 0); paused "
            f"{b.paused}{false}{early}; voice onset → paused {_ms(b.onset_to_stop_ms)}",
            f"  paused until it resumed        : {_ms(b.paused_ms)}",
        ]
    lines = [
        f"{head}: stopped {b.stopped} of {b.trials}, paused at the onset {b.paused}{false}"
        f"{early}; voice onset → playback stopped {_ms(b.onset_to_stop_ms)} (target p95 ≤ 100 ms)",
        f"  voice onset → cut (the rule)   : {_ms(b.onset_to_cut_ms)}",
    ]
    if b.condition == "stop word":
        lines.append(f"  its transcript sent → cut      : {_ms(b.rule_to_stop_ms)}")
    return lines


def report_json(r: RealtimeReport) -> dict[str, object]:
    return {"figures": r.figures(), "load": r.load, **dataclasses.asdict(r)}


def _p(values: list[float], q: float) -> float | None:
    return round(percentile(values, q), 1) if values else None


def _ms(values: list[float]) -> str:
    if not values:
        return "not measured"
    return (
        f"p50 {percentile(values, 50):.1f} ms, p95 {percentile(values, 95):.1f} ms, "
        f"{min(values):.1f}–{max(values):.1f} ms over {len(values)}"
    )
