"""Prepared clauses kept on disk between runs: the robot's fixed replies are synthesized once.

At start-up the voice agent prepares what the robot says often in the same words ("Sorry, I
didn't catch that.", its name, what it can do: :meth:`~anima.speech.base.PreparesAhead.prepare`).
With Piper that was 30-40 s of audio, ~7 s of CPU on this 2-core machine at every start (more
on a Raspberry Pi), for the same audio each time. A :class:`ClauseStore` keeps each prepared
clause's chunks (samples and marks) in one file, so a later start reads them back in
milliseconds.

A store belongs to one voice: its directory is named for a key the engine gives (Piper's: the
voice files' paths, sizes and times, Piper's version and the engine's own code), so a new voice
or new synthesis code never plays old audio. Files are NumPy ``.npz`` archives read with
``allow_pickle=False`` (samples as int16, the clause text and marks as JSON); a file that does
not read back as the clause it is named for is removed and made again. At most
:data:`MAX_FILES` files are kept per voice (the oldest used go first). Every failure to read or
write is logged and ignored: the store only saves time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from anima.speech.base import AudioChunk, PhonemeMark, VisemeMark, WordMark

log = logging.getLogger(__name__)

FORMAT = 1  # the files' layout: a change starts new directories
MAX_FILES = 256  # clauses kept per voice (the canned replies are a dozen or two)


class ClauseStore:
    """Clauses of one voice (``key``) as files under ``root``. Thread-safe (atomic files)."""

    def __init__(self, root: Path, key: str, *, max_files: int = MAX_FILES) -> None:
        digest = hashlib.sha1(f"{FORMAT}\0{key}".encode()).hexdigest()[:16]
        self.directory = root / digest
        self.max_files = max_files

    def _path(self, text: str) -> Path:
        return self.directory / f"{hashlib.sha1(text.encode()).hexdigest()[:24]}.npz"

    def load(self, text: str) -> list[AudioChunk] | None:
        """``text``'s chunks as they were saved (marks from 0), or None."""
        path = self._path(text)
        try:
            # opened here: np.load leaves a file it fails to read open
            with path.open("rb") as f, np.load(f, allow_pickle=False) as archive:
                meta = json.loads(bytes(archive["meta"]).decode())
                samples = np.asarray(archive["samples"], dtype=np.int16)
            chunks = _chunks(meta, samples, text)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except Exception as exc:  # damaged, foreign or another clause's: made again
            log.warning("speech store: %s is unreadable (%s); it is made again", path.name, exc)
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: kept when the store is pruned
        return chunks

    def save(self, text: str, chunks: Sequence[AudioChunk]) -> None:
        """Keep ``text``'s chunks (marks from 0); a failure is logged, nothing raised."""
        if not chunks:
            return
        path = self._path(text)
        meta = {
            "text": text,
            "chunks": [
                {
                    "n": len(c.samples),
                    "rate": c.sample_rate,
                    "phonemes": [[m.phoneme, m.offset] for m in c.phonemes],
                    "visemes": [[m.viseme, m.offset] for m in c.visemes],
                    "words": [[m.char, m.offset] for m in c.words],
                }
                for c in chunks
            ],
        }
        samples = np.concatenate([np.asarray(c.samples, dtype=np.int16) for c in chunks])
        tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npz")
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with tmp.open("wb") as f:
                np.savez(
                    f, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8), samples=samples
                )
            tmp.replace(path)
            self._prune()
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            log.warning(
                "speech store: cannot keep a prepared clause in %s: %s", self.directory, exc
            )

    def _prune(self) -> None:
        files = list(self.directory.glob("*.npz"))
        if len(files) <= self.max_files:
            return
        files.sort(key=lambda p: p.stat().st_mtime)
        for old in files[: len(files) - self.max_files]:
            old.unlink(missing_ok=True)


def _chunks(meta: Any, samples: np.ndarray[Any, Any], text: str) -> list[AudioChunk]:
    """The chunks a file's ``meta`` and ``samples`` describe; ValueError when they are not
    ``text``'s or do not add up."""
    if meta.get("text") != text:
        raise ValueError("it holds another clause")
    described = meta["chunks"]
    if not isinstance(described, list) or not described:
        raise ValueError("no chunks")
    if sum(int(c["n"]) for c in described) != len(samples):
        raise ValueError("its samples do not add up")
    chunks: list[AudioChunk] = []
    start = 0
    for c in described:
        n = int(c["n"])
        chunks.append(
            AudioChunk(
                samples[start : start + n],
                int(c["rate"]),
                phonemes=tuple(PhonemeMark(str(p), int(o)) for p, o in c["phonemes"]),
                visemes=tuple(VisemeMark(int(v), int(o)) for v, o in c["visemes"]),
                words=tuple(WordMark(int(ch), int(o)) for ch, o in c["words"]),
            )
        )
        start += n
    return chunks
