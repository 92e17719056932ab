"""The Piper voice in its own process: :class:`VoiceWorker`, what :class:`PiperEngine` uses as
its voice when ``speech.piper_process`` is on (the default).

Why: in the runtime process the voice (with onnxruntime's and Piper's import) added 123 MB of
RSS once loaded and 197–210 MB after 35 s of speech (onnxruntime's arena and malloc keep what
synthesis took), its phonemizer holds the GIL for a whole clause, and loading it stalled a 100 Hz
loop 23–104 ms (1–3 missed ticks each time). In a worker process
(:mod:`anima.speech.piper.worker`) the runtime grows 3–4 MB, loading misses no tick (worst
lateness 2.6–9.6 ms), the worker (150 MB loaded, 225–237 MB after speaking) runs one onnxruntime
thread, and it exits after ``idle_exit_s`` with no request, giving all of it back. ``anima
serve`` idle after start: 62 MB with the worker (151 MB beside it) against 183 MB. First audio of
a short sentence: 215–468 ms warm (216–407 ms in process, on a machine with a core taken by
another process, which the worker at nice 10 yielded to; it keeps the runtime's priority now),
1.0–2.1 s when the worker must start first. Figures and method: docs/speech.md, "Piper in its
own process".

:class:`VoiceWorker` has the surface of ``piper.PiperVoice`` that the engine uses —
``config.sample_rate``, ``phonemize(text)`` and ``synthesize(text, include_alignments=True)``
yielding chunks with ``audio_int16_array``, ``sample_rate`` and ``phoneme_alignments`` — so the
engine, its clause cache and its marks are the same either way. Requests are serialised (the
speech thread and a prepare thread share one worker). Chunks are yielded as they arrive; a
consumer that stops early (a cancel) leaves the rest of that request's frames, which the next
request skips (at most the rest of one clause).

Life: :meth:`start` launches the worker and waits for its voice to load and warm up; a request
finding it gone (it left idle, or died) starts another first. A worker that dies during a
request is a :class:`~anima.errors.SpeechError` for that request. The worker reads its stdin:
when this process closes it (:meth:`close`) or dies, the worker sees its end and exits, so no
worker outlives the runtime. A subprocess with pipes was chosen over multiprocessing: it started
in 15 ms against 58 ms for ``spawn`` (14 ms for a warm ``forkserver``, 63 ms for its first
child; ``python /tmp/pw_start.py``), and it needs no pickle across the boundary.
"""

from __future__ import annotations

import contextlib
import logging
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import count
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from anima.errors import SpeechError
from anima.speech.piper import worker as wire

logger = logging.getLogger(__name__)

STOP_WAIT_S = 2.0  # close(): how long the worker gets to leave after its stdin ends


@dataclass(frozen=True)
class VoiceConfig:
    """What the engine reads of the voice's config."""

    sample_rate: int


@dataclass(frozen=True)
class Aligned:
    """One of Piper's phoneme alignments, as :mod:`anima.speech.piper.marks` reads it."""

    phoneme: str
    num_samples: int


@dataclass(frozen=True)
class VoiceChunk:
    """One of Piper's chunks, as :func:`anima.speech.piper.piper._synthesized` reads it."""

    audio_int16_array: NDArray[np.int16]
    sample_rate: int
    phoneme_alignments: tuple[Aligned, ...] | None


class _GoneError(Exception):
    """The worker was not there for a request (it had left idle): start another and retry."""


class VoiceWorker:
    """A Piper voice in a worker process (see the module docstring)."""

    def __init__(self, model: Path, config: Path | None, *, idle_exit_s: float) -> None:
        self._args = [str(model), str(config) if config else "", repr(float(idle_exit_s))]
        self._model = model
        self._lock = threading.Lock()  # one request at a time, and the process's life
        self._proc: subprocess.Popen[bytes] | None = None
        self._starting: subprocess.Popen[bytes] | None = None  # loading its voice, not ready yet
        self._ids = count(1)
        self.config = VoiceConfig(sample_rate=0)  # known once the worker first says ready
        self.starts = 0  # how many workers were started (a restart adds one)

    @property
    def pid(self) -> int | None:
        """The running worker's process id (None when none runs)."""
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def start(self) -> None:
        """Start the worker (unless it runs) and wait until its voice is loaded and warm."""
        with self._lock:
            self._running()

    def close(self) -> None:
        """End the worker: its stdin closes, it exits (killed after :data:`STOP_WAIT_S`). One
        still loading its voice is ended too (without waiting for the start that holds the
        lock: a runtime stopping while a busy machine loads the voice would wait for it)."""
        proc, self._proc = self._proc, None
        starting, self._starting = self._starting, None
        for p in (proc, starting):
            if p is not None:
                _end(p)

    def phonemize(self, text: str) -> list[list[str]]:
        with self._lock:
            header, _ = next(self._replies({"op": "phonemize", "text": text}))
            return [[str(p) for p in sentence] for sentence in header["sentences"]]

    def synthesize(self, text: str, include_alignments: bool = True) -> Iterator[VoiceChunk]:
        """Piper's chunks of ``text``, each as soon as the worker sends it (always aligned)."""
        with self._lock:
            for header, payload in self._replies({"op": "synthesize", "text": text}):
                if header["op"] == "done":
                    return
                aligned = header.get("alignments")
                yield VoiceChunk(
                    np.frombuffer(payload, dtype="<i2").astype(np.int16, copy=False),
                    int(header["sample_rate"]),
                    None if aligned is None else tuple(Aligned(str(p), int(n)) for p, n in aligned),
                )

    def _replies(self, request: wire.Header) -> Iterator[tuple[wire.Header, bytes]]:
        """The replies to ``request`` (its error raised), from a worker started if none runs;
        retried once on a new worker when the old one had just left idle."""
        rid = next(self._ids)
        for attempt in (1, 2):
            proc = self._running()
            try:
                yield from self._exchange(proc, {**request, "id": rid})
                return
            except _GoneError:
                _end(proc)
                self._proc = None
                if attempt == 2:
                    raise SpeechError("piper: the voice worker left twice in a row") from None

    def _exchange(
        self, proc: subprocess.Popen[bytes], request: wire.Header
    ) -> Iterator[tuple[wire.Header, bytes]]:
        assert proc.stdin is not None
        assert proc.stdout is not None
        try:
            wire.write_frame(proc.stdin.fileno(), request)
        except BrokenPipeError:
            if proc.wait() == 0:
                raise _GoneError from None  # it had left idle
            raise self._died(proc, request) from None
        answered = False
        while True:
            frame = wire.read_frame(proc.stdout.fileno())
            if frame is None:
                raise self._died(proc, request)
            header, payload = frame
            if header["op"] == "bye" and not answered:
                raise _GoneError  # it left idle as the request went in
            if header.get("id") != request["id"]:
                continue  # the rest of an earlier request that was not read to its end
            if header["op"] == "error":
                raise SpeechError(f"piper: the voice worker failed: {header.get('message')}")
            answered = True
            yield header, payload
            if header["op"] in ("done", "phonemes"):
                return

    def _died(self, proc: subprocess.Popen[bytes], request: wire.Header) -> SpeechError:
        _end(proc)
        self._proc = None
        return SpeechError(
            f"piper: the voice worker (pid {proc.pid}) ended with code {proc.returncode} during "
            f"{request['op']} of {str(request.get('text', ''))[:40]!r}; the next request starts "
            "another"
        )

    def _running(self) -> subprocess.Popen[bytes]:
        """The worker, started (and its voice loaded) if none runs. Under ``_lock``."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            return proc
        if proc is not None:
            logger.info("piper: the voice worker had exited (code %s)", proc.returncode)
            _end(proc)  # its pipes
        self._proc = None
        proc = subprocess.Popen(
            [sys.executable, "-P", wire.__file__, *self._args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            close_fds=True,
        )
        assert proc.stdout is not None
        self._starting = proc
        try:
            frame = wire.read_frame(proc.stdout.fileno())
        except (OSError, ValueError):  # closed under it (close() while it loads)
            frame = None
        finally:
            self._starting = None
        if (
            frame is None
            or frame[0].get("op") != "ready"
            or frame[0].get("version") != wire.VERSION
        ):
            _end(proc)
            why = frame[0].get("message") if frame else f"it ended with code {proc.returncode}"
            raise SpeechError(f"piper: cannot load voice {self._model} in its worker: {why}")
        self.config = VoiceConfig(sample_rate=int(frame[0]["sample_rate"]))
        self._proc = proc
        self.starts += 1
        # reaped as soon as it exits (idle, or killed): not left a zombie until the next request
        threading.Thread(target=proc.wait, name=f"piper-reaper-{proc.pid}", daemon=True).start()
        logger.info("piper: voice worker %d ready (%d Hz)", proc.pid, self.config.sample_rate)
        return proc


def _end(proc: subprocess.Popen[bytes]) -> None:
    """End the worker's stdin, wait for it to exit (kill it if it does not), close its stdout.
    A reader on another thread sees the end of the output before it is closed."""
    for pipe in (proc.stdin, None, proc.stdout):
        if pipe is None:
            try:
                proc.wait(STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            continue
        with contextlib.suppress(OSError):  # a broken pipe: it is gone already
            pipe.close()
