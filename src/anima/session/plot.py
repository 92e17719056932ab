"""Plot a recorded session: channel trajectories, with speech, animations and estop shaded.

Two panels: the face and head channels (those with a role) and the body channels that moved.
Values are in channel units, against the recorder's time (``rt``). Speech intervals are blue,
animations green with their names, emergency stops red.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from anima.errors import AnimaError, MissingDependencyError
from anima.wire.jsontypes import JsonObject

MOVED = 0.5  # channel units: a body channel that moved less is left out of the plot


@dataclass
class Session:
    """A recording, read back: the channels, the frames, and the shaded intervals."""

    channels: list[JsonObject]
    times: list[float] = field(default_factory=list)
    values: list[list[float]] = field(default_factory=list)
    speech: list[tuple[float, float, str]] = field(default_factory=list)  # start, end, text
    animations: list[tuple[float, float, str]] = field(default_factory=list)
    estops: list[tuple[float, float]] = field(default_factory=list)
    # every commanded frame (``frame`` lines, anima record): drawn instead of the 30 Hz states
    frames: list[tuple[float, list[float]]] = field(default_factory=list)

    def prefer_frames(self) -> None:
        if self.frames:
            self.times = [rt for rt, _ in self.frames]
            self.values = [values for _, values in self.frames]


def read_session(path: Path) -> Session:
    session: Session | None = None
    speaking: dict[str, tuple[float, str]] = {}
    moving: dict[str, float] = {}
    estop_at: float | None = None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise AnimaError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
        except json.JSONDecodeError as exc:
            raise AnimaError(f"{path}:{number}: not JSON: {exc.msg}") from None
        kind, rt = msg.get("type"), float(msg.get("rt", 0.0))
        if kind == "hello":
            session = Session(channels=msg["body"]["channels"])
        elif session is None:
            raise AnimaError(f"{path}:{number}: a session starts with its hello message")
        elif kind == "state":
            session.times.append(rt)
            session.values.append(msg["values"])
        elif kind == "frame":
            session.frames.append((rt, msg["values"]))
        elif kind == "event":
            ev = msg.get("kind")
            if ev == "start_speak":
                speaking[msg["utterance"]] = (rt, msg.get("text", ""))
            elif ev == "end_speak" and msg["utterance"] in speaking:
                start, text = speaking.pop(msg["utterance"])
                session.speech.append((start, rt, text))
            elif ev == "move_started":
                moving[msg["name"]] = rt
            elif ev == "move_finished" and msg["name"] in moving:
                session.animations.append((moving.pop(msg["name"]), rt, msg["name"]))
            elif ev == "estop":
                if msg.get("active"):
                    estop_at = rt
                elif estop_at is not None:
                    session.estops.append((estop_at, rt))
                    estop_at = None
    if session is None:
        raise AnimaError(f"{path}: empty recording")
    session.prefer_frames()
    end = session.times[-1] if session.times else 0.0
    session.speech += [(s, end, text) for s, text in speaking.values()]
    session.animations += [(s, end, name) for name, s in moving.items()]
    if estop_at is not None:
        session.estops.append((estop_at, end))
    return session


def plot_session(path: Path, out: Path, *, width: int = 1200, height: int = 800) -> Path:
    """Draw ``path`` into the PNG ``out`` of ``width`` × ``height`` pixels."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise MissingDependencyError("matplotlib", "plot") from exc
    session = read_session(path)
    if not session.times:
        raise AnimaError(f"{path}: no frames recorded")
    dpi = 100
    fig, (face, body) = plt.subplots(
        2, 1, sharex=True, figsize=(width / dpi, height / dpi), dpi=dpi
    )
    columns = list(zip(*session.values, strict=True))
    for c in session.channels:
        index = c.get("index")
        if not isinstance(index, int) or not 0 <= index < len(columns):
            raise AnimaError(f"{path}: a channel's index is {index!r}, not one of the frame's")
        series = columns[index]
        if c["role"] != "other":
            face.plot(session.times, series, label=c["name"], linewidth=1)
        elif max(series) - min(series) > MOVED:
            body.plot(session.times, series, label=c["name"], linewidth=1)
    for ax, title in ((face, "face and head"), (body, "body (channels that moved)")):
        for start, end, _text in session.speech:
            ax.axvspan(start, end, color="tab:blue", alpha=0.12)
        for start, end, _name in session.animations:
            ax.axvspan(start, end, color="tab:green", alpha=0.12)
        for start, end in session.estops:
            ax.axvspan(start, end, color="tab:red", alpha=0.2)
        ax.set_title(title, loc="left", fontsize=10)
        ax.set_ylabel("channel units")
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper right", fontsize=7, ncol=3)
    top = face.get_ylim()[1]
    for start, _end, name in session.animations:
        face.text(start, top, name, fontsize=7, va="top", color="tab:green")
    for start, _end, text in session.speech:
        face.text(start, top, f"“{text[:30]}”", fontsize=7, va="bottom", color="tab:blue")
    body.set_xlabel("seconds since the recording started")
    fig.suptitle(f"{path.name}: speech blue, animations green, estop red", fontsize=10)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=dpi)
    plt.close(fig)
    return out
