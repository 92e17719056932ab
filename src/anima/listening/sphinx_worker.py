"""pocketsphinx in a worker process, so its C calls never hold this interpreter's lock (the GIL).

pocketsphinx keeps the GIL through every call. Measured on a 2-core machine: creating a decoder
115–350 ms, ``process_raw`` 16 ms (grammar) to over 1 s (language model, on noise) per second of
audio, ``end_utt`` 59–330 ms with the language model — each a stall of the 100 Hz motion loop,
which needs the GIL every 10 ms. In a child process none of it touches this interpreter: the
listener's thread waits on a pipe, which releases the GIL.

:class:`SphinxWorker` is the parent's end: :meth:`SphinxWorker.start` spawns
a Python running :func:`main` and creates the decoder there; each method is one
request and its reply. The child ends when its stdin closes: at :meth:`SphinxWorker.close`, or
when this process exits, however it exits.

Wire format, version 1 (the child's stdin and stdout, binary). Every message, either way, is a
4-byte big-endian length N and then N bytes: one line of JSON (UTF-8, ending with ``\\n``) and,
for ``feed`` only, the audio after it (16 kHz mono int16, little-endian)::

    request                                          reply ("ok": false → "error", "kind")
    {"v": 1, "op": "open", "config": {key: value}}   {"ok": true}
    {"op": "known", "words": [word, ...]}            {"ok": true, "known": [bool, ...]}
    {"op": "jsgf", "name": n, "text": grammar}       {"ok": true}
    {"op": "keyphrase", "name": n, "phrase": p}      {"ok": true}
    {"op": "activate", "name": n}                    {"ok": true}
    {"op": "start"}                                  {"ok": true}
    {"op": "feed"} + audio                           {"ok": true, "hyp": text|null,
                                                      "end_frame": last segment's end|null}
    {"op": "end"}                                    {"ok": true, "hyp": text|null}

``kind`` is ``"value"`` for what pocketsphinx raises ``ValueError`` for (a grammar that does not
parse), ``"missing"`` when pocketsphinx is not installed, ``"failed"`` otherwise.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import select
import struct
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import IO, Any

from anima.errors import MissingDependencyError, SpeechError
from anima.wire.jsontypes import JsonObject

logger = logging.getLogger(__name__)

VERSION = 1
MAX_MESSAGE = 1 << 24  # bytes: far above any request or reply; a corrupt length stops here
FEED_SAMPLES = 8000  # the most audio one feed request carries (0.5 s): replies stay prompt
OPEN_TIMEOUT_S = 60.0  # a fresh interpreter, the import and the model, on a loaded machine
# the child runs this file by its path (``-P``: its folder, which holds modules named like
# stdlib ones, stays off sys.path): importing it as ``anima.listening.sphinx_worker`` imported the
# ``anima.listening`` package first (the listener, numpy, the config: ~0.6 s of CPU per worker)
_CHILD = (sys.executable, "-P", __file__)
CALL_TIMEOUT_S = 20.0  # one request (the language model on 0.5 s of noise takes ~0.6 s)


@dataclass(frozen=True)
class Hypothesis:
    """The decoder's best text so far, and where its last word ended (pocketsphinx frames)."""

    text: str | None
    end_frame: int | None


class SphinxWorker:
    """A pocketsphinx decoder in a child process (see the module docstring). One thread."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._process = process

    @classmethod
    def start(cls, config: dict[str, str | float | bool | None]) -> SphinxWorker:
        """Spawn the worker and create its decoder from ``config`` (pocketsphinx keys)."""
        try:
            process = subprocess.Popen(
                _CHILD,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True,
            )  # fmt: skip
        except OSError as exc:
            raise SpeechError(f"pocketsphinx worker: cannot start {sys.executable}: {exc}") from exc
        worker = cls(process)
        try:
            worker._call({"v": VERSION, "op": "open", "config": config}, timeout=OPEN_TIMEOUT_S)
        except BaseException:
            worker.close()
            raise
        return worker

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    @property
    def exit_code(self) -> int | None:
        """The child's exit code (negative: the signal that ended it); None while it runs."""
        return self._process.poll()

    def known(self, words: list[str]) -> list[bool]:
        """Whether the dictionary has each word."""
        known = self._call({"op": "known", "words": words}).get("known")
        if not isinstance(known, list) or len(known) != len(words):
            raise SpeechError(f"pocketsphinx worker: 'known' answered {str(known)[:60]}")
        return [bool(k) for k in known]

    def add_jsgf(self, name: str, text: str) -> None:
        """Add a JSGF grammar search; ``ValueError`` when it does not parse."""
        self._call({"op": "jsgf", "name": name, "text": text})

    def add_keyphrase(self, name: str, phrase: str) -> None:
        self._call({"op": "keyphrase", "name": name, "phrase": phrase})

    def activate(self, name: str) -> None:
        self._call({"op": "activate", "name": name})

    def start_utt(self) -> None:
        self._call({"op": "start"})

    def feed(self, pcm: bytes) -> Hypothesis:
        """Decode int16 audio (any length: sent in pieces of :data:`FEED_SAMPLES`)."""
        reply: JsonObject = {"hyp": None, "end_frame": None}
        step = 2 * FEED_SAMPLES
        for begin in range(0, len(pcm), step):
            reply = self._call({"op": "feed"}, pcm[begin : begin + step])
        hyp, end = reply.get("hyp"), reply.get("end_frame")
        return Hypothesis(
            hyp if isinstance(hyp, str) else None,
            end if isinstance(end, int) and not isinstance(end, bool) else None,
        )

    def end_utt(self) -> str | None:
        """End the utterance; its final text (None when nothing was recognized)."""
        hyp = self._call({"op": "end"}).get("hyp")
        return hyp if isinstance(hyp, str) else None

    def close(self, timeout: float = 2.0) -> None:
        """End the child: close its stdin, wait, kill it if it does not go."""
        process = self._process
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout)

    # ------------------------------------------------------------------ the wire
    def _call(
        self, request: JsonObject, audio: bytes = b"", *, timeout: float = CALL_TIMEOUT_S
    ) -> JsonObject:
        process = self._process
        assert process.stdin is not None
        assert process.stdout is not None
        op = request["op"]
        try:
            write_message(process.stdin, json.dumps(request).encode() + b"\n" + audio)
            reply = json.loads(read_message(process.stdout, timeout).partition(b"\n")[0])
        except (OSError, ValueError, EOFError, TimeoutError) as exc:
            code = process.poll()
            self.close(0.5)
            state = f"exited with code {code}" if code is not None else "stopped"
            raise SpeechError(f"pocketsphinx worker {state} during {op!r}: {exc}") from exc
        if not isinstance(reply, dict):
            self.close(0.5)
            raise SpeechError(f"pocketsphinx worker answered {op!r} with {str(reply)[:60]}")
        if not reply.get("ok"):
            error, kind = str(reply.get("error", "?")), reply.get("kind")
            if kind == "value":
                raise ValueError(error)
            if kind == "missing":
                raise MissingDependencyError("pocketsphinx", "listen")
            raise SpeechError(f"pocketsphinx worker: {op!r} failed: {error}")
        return reply


def still_running(worker: SphinxWorker | None, owner: str) -> bool:
    """True when ``worker`` runs; when it died, say so (``owner`` names who used it) and close
    its pipes: the caller starts another, and the dead one's would be left to the collector."""
    if worker is None:
        return False
    if worker.alive:
        return True
    logger.warning(
        "%s: the pocketsphinx worker ended (%s): starting another; the audio so far is lost",
        owner, worker.exit_code,
    )  # fmt: skip
    worker.close()
    return False


def write_message(stream: IO[bytes], body: bytes) -> None:
    stream.write(struct.pack(">I", len(body)) + body)
    stream.flush()


def read_message(stream: IO[bytes], timeout: float | None = None) -> bytes:
    """One message's body; ``EOFError`` at the end of the stream, ``TimeoutError`` when
    ``timeout`` seconds pass first (``None``: wait as long as it takes)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    (size,) = struct.unpack(">I", _read_exact(stream, 4, deadline))
    if size > MAX_MESSAGE:
        raise ValueError(f"a message of {size} bytes (at most {MAX_MESSAGE})")
    return _read_exact(stream, size, deadline)


def _read_exact(stream: IO[bytes], n: int, deadline: float | None) -> bytes:
    fd = stream.fileno()
    parts: list[bytes] = []
    while n > 0:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError("no reply in time")
        part = os.read(fd, n)  # unbuffered: select saw what the pipe holds, not a buffer
        if not part:
            raise EOFError("the stream ended")
        parts.append(part)
        n -= len(part)
    return b"".join(parts)


# ---------------------------------------------------------------------- the child
def _serve(requests: IO[bytes], replies: IO[bytes]) -> None:
    decoder: Any = None
    while True:
        try:
            body = read_message(requests)
        except EOFError:
            return  # the parent closed the pipe, or is gone
        line, _, audio = body.partition(b"\n")
        try:
            request = json.loads(line)
            if decoder is None and request.get("op") != "open":
                raise RuntimeError("the first request must be 'open'")
            decoder, reply = _handle(decoder, request, audio)
        except ImportError as exc:
            reply = {"ok": False, "error": str(exc), "kind": "missing"}
        except ValueError as exc:
            reply = {"ok": False, "error": str(exc), "kind": "value"}
        except Exception as exc:  # answered, never fatal: the parent decides
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "kind": "failed"}
        write_message(replies, json.dumps(reply).encode() + b"\n")


def _handle(decoder: Any, request: Any, audio: bytes) -> tuple[Any, JsonObject]:
    """One request (the parent's JSON, as :meth:`SphinxWorker._call` wrote it) → the decoder
    (made by ``open``) and the reply."""
    op = request["op"]
    if op == "open":
        if request.get("v") != VERSION:
            raise RuntimeError(f"wire version {request.get('v')!r}, this worker speaks {VERSION}")
        import pocketsphinx

        config = pocketsphinx.Config()
        for key, value in request["config"].items():
            config[key] = value
        return pocketsphinx.Decoder(config), {"ok": True}
    if op == "known":
        return decoder, {"ok": True, "known": [decoder.lookup_word(w) is not None
                                               for w in request["words"]]}  # fmt: skip
    if op == "jsgf":
        decoder.add_jsgf_string(request["name"], request["text"])
    elif op == "keyphrase":
        decoder.add_keyphrase(request["name"], request["phrase"])
    elif op == "activate":
        decoder.activate_search(request["name"])
    elif op == "start":
        decoder.start_utt()
    elif op == "feed":
        decoder.process_raw(audio, False, False)
        hyp = decoder.hyp()
        ends = [s.end_frame for s in decoder.seg()] if hyp is not None else []
        return decoder, {"ok": True, "hyp": hyp.hypstr if hyp is not None else None,
                         "end_frame": max(ends) if ends else None}  # fmt: skip
    elif op == "end":
        decoder.end_utt()
        hyp = decoder.hyp()
        return decoder, {"ok": True, "hyp": hyp.hypstr if hyp is not None else None}
    else:
        raise RuntimeError(f"unknown request {op!r}")
    return decoder, {"ok": True}


def main() -> None:
    """The child's entry point: serve requests on stdin until it closes.

    It runs at a lower CPU priority (nice +5): on a small machine its decoding then yields a
    core to the motion loop's thread rather than sharing it."""
    with contextlib.suppress(OSError):
        os.nice(5)
    replies, sys.stdout = sys.stdout.buffer, sys.stderr  # a stray print never reaches the wire
    _serve(sys.stdin.buffer, replies)


if __name__ == "__main__":
    main()
