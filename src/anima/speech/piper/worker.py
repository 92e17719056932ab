"""The Piper voice's own process: loads the voice, answers "phonemize" and "synthesize" requests.

Run as ``python -P worker.py MODEL CONFIG IDLE_EXIT_S`` by :mod:`anima.speech.piper.process`
(``-P``: the script's folder, which holds a ``piper.py``, is not put on ``sys.path``). It imports
only the standard library, numpy, onnxruntime and Piper — never the ``anima`` package, whose
import alone costs ~200 ms and ~10 MB — and loads the voice with
:mod:`anima.speech.piper.voicefile` (by its path), exactly as the runtime process would.

Wire format (version :data:`VERSION`), on the worker's stdin (requests) and a copy of its stdout
(replies; fd 1 itself is pointed at stderr, so nothing Piper or espeak prints can corrupt a
frame). No pickle: each frame is a 4-byte big-endian length, that many bytes of a UTF-8 JSON
header, then ``header["bytes"]`` raw bytes (0 when absent).

- worker → ``{"op": "ready", "version": 1, "sample_rate": 22050}`` once the voice is loaded and
  warmed up, or ``{"op": "error", "message": ...}`` and exit code 1;
- ``{"op": "phonemize", "id": n, "text": ...}`` → ``{"op": "phonemes", "id": n,
  "sentences": [["h", "ə", ...], ...]}``;
- ``{"op": "synthesize", "id": n, "text": ...}`` → per Piper chunk ``{"op": "chunk", "id": n,
  "sample_rate": r, "alignments": [[phoneme, num_samples], ...] | null, "bytes": k}`` and k
  bytes of int16 little-endian audio, then ``{"op": "done", "id": n}``;
- any request that fails → ``{"op": "error", "id": n, "message": ...}``;
- no request for IDLE_EXIT_S seconds (0: never) → ``{"op": "bye"}`` and exit code 0;
  end of stdin (the runtime closed it, or died) → exit code 0; the replies' pipe closed (the
  runtime stopped while the voice loaded, or mid-reply) → exit code 0, quietly.

The worker keeps the runtime's CPU priority (``NICE`` = 0) and never a real-time policy it might
inherit. At nice 10 it was starved on a busy machine: with three busy processes on the two cores,
a reply in ``anima bench hostile`` was not spoken within 30 s (spoken at nice 0). The motion loop
needs no such help: it runs at real-time priority where it can (docs/motion.md), and the worker's
one onnxruntime thread takes at most one core.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import select
import struct
import sys
from pathlib import Path
from typing import Any

VERSION = 1
NICE = 0  # added to the worker's niceness: 10 starved the robot's voice on a busy machine
_LENGTH = struct.Struct(">I")
Header = dict[str, Any]  # a frame's JSON header, as declared above


def write_frame(fd: int, header: Header, payload: bytes = b"") -> None:
    """One frame on ``fd`` (the header's ``bytes`` is set from ``payload``)."""
    if payload:
        header = {**header, "bytes": len(payload)}
    head = json.dumps(header, ensure_ascii=False).encode()
    data = memoryview(_LENGTH.pack(len(head)) + head + payload)
    while data:
        data = data[os.write(fd, data) :]


def _read_exact(fd: int, n: int) -> bytes | None:
    parts: list[bytes] = []
    while n:
        part = os.read(fd, min(n, 1 << 20))
        if not part:
            return None  # end of file
        parts.append(part)
        n -= len(part)
    return b"".join(parts)


def read_frame(fd: int) -> tuple[Header, bytes] | None:
    """The next frame on ``fd``: its header and payload; None at end of file."""
    length = _read_exact(fd, _LENGTH.size)
    if length is None:
        return None
    head = _read_exact(fd, _LENGTH.unpack(length)[0])
    if head is None:
        return None
    header: Header = json.loads(head)
    payload = _read_exact(fd, int(header.get("bytes", 0))) if header.get("bytes") else b""
    if payload is None:
        return None
    return header, payload


def _answer(voice: Any, header: Header, out: int) -> None:
    import numpy as np

    rid = header.get("id")
    try:
        if header["op"] == "phonemize":
            sentences = voice.phonemize(str(header["text"]))
            write_frame(out, {"op": "phonemes", "id": rid, "sentences": sentences})
        elif header["op"] == "synthesize":
            for chunk in voice.synthesize(str(header["text"]), include_alignments=True):
                audio = np.ascontiguousarray(chunk.audio_int16_array, dtype="<i2")
                aligned = chunk.phoneme_alignments
                alignments = None
                if aligned is not None:
                    alignments = [[str(a.phoneme), int(a.num_samples)] for a in aligned]
                reply = {"op": "chunk", "id": rid, "sample_rate": int(chunk.sample_rate)}
                write_frame(out, {**reply, "alignments": alignments}, audio.tobytes())
            write_frame(out, {"op": "done", "id": rid})
        else:
            write_frame(out, {"op": "error", "id": rid, "message": f"unknown op {header['op']!r}"})
    except Exception as exc:
        write_frame(out, {"op": "error", "id": rid, "message": f"{type(exc).__name__}: {exc}"})


def serve(voice: Any, idle_exit_s: float, inp: int, out: int) -> None:
    """Answer requests until stdin ends, or none came for ``idle_exit_s`` (0: never)."""
    while True:
        if idle_exit_s > 0 and not select.select([inp], [], [], idle_exit_s)[0]:
            write_frame(out, {"op": "bye"})
            return
        frame = read_frame(inp)
        if frame is None:
            return
        _answer(voice, frame[0], out)


def _voicefile() -> Any:
    """:mod:`anima.speech.piper.voicefile`, loaded by its path (not through ``anima``)."""
    spec = importlib.util.spec_from_file_location(
        "_anima_piper_voicefile", Path(__file__).with_name("voicefile.py")
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    out = os.dup(1)  # replies go here; fd 1 (whatever a library prints) goes to stderr
    os.dup2(2, 1)
    model, config, idle_exit_s = Path(argv[0]), Path(argv[1]) if argv[1] else None, float(argv[2])
    if hasattr(os, "sched_getscheduler") and os.sched_getscheduler(0) != os.SCHED_OTHER:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))  # never real-time, inherited
    os.nice(NICE)
    try:
        voice = _voicefile().open_voice(model, config)
    except Exception as exc:
        with contextlib.suppress(BrokenPipeError):  # nobody left to tell
            write_frame(out, {"op": "error", "message": f"{type(exc).__name__}: {exc}"})
        return 1
    sample_rate = int(voice.config.sample_rate)
    # the runtime may go away while the voice loads (it stopped: a worker started just before
    # is not waited for) or during a reply: its end of the pipe closed, this one exits quietly
    with contextlib.suppress(BrokenPipeError):
        write_frame(out, {"op": "ready", "version": VERSION, "sample_rate": sample_rate})
        serve(voice, idle_exit_s, 0, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
