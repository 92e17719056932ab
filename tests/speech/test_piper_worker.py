"""The Piper voice in its own process (anima.speech.piper.process): the real worker, the real voice.

The same text gives the same chunks and marks as the voice in process — not the same samples:
Piper's model draws random noise on every synthesis (noise_scale 0.667, noise_w 0.8), so even two
runs in one process differ in length (61,184 and 62,976 samples for one sentence), and
``onnxruntime.set_seed`` does not make it repeat. What must match is what the lips and the
cache read: the pieces, the symbols, the word marks, marks that add up to each chunk's samples.

The life of a real process is what is tested here, so some tests wait on the real clock
(bounded, by polling, never a fixed sleep longer than 1 s).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from anima.config.speech import SpeechConfig
from anima.drivers.sim import SimDriver
from anima.errors import ConfigError, SpeechError
from anima.events import AttentionChanged, ConversationChanged
from anima.runtime import Runtime
from anima.speech.base import AudioChunk, Cancel
from anima.speech.piper.piper import PiperEngine
from anima.speech.piper.process import VoiceWorker
from anima.speech.piper.voice import voice_files
from anima.speech.sinks import NullSink
from anima.testing import eventually

pytestmark = pytest.mark.model

TEXT = "Hello there, my friend. The fox jumps over 2024 dogs; it is quick!"
LONG = " ".join(f"Sentence number {n} is here." for n in range(1, 13))


@pytest.fixture(scope="module")
def worker_engine() -> Iterator[PiperEngine]:
    pytest.importorskip("piper", reason="piper-tts is not installed (pip install 'anima[speech]')")
    engine = PiperEngine(process=True, idle_exit_s=0)
    engine.load()
    yield engine
    engine.close()


def _worker(engine: PiperEngine) -> VoiceWorker:
    voice = engine._loaded()
    assert isinstance(voice, VoiceWorker)
    return voice


def _gone(pid: int, within_s: float = 5.0) -> bool:
    """Whether process ``pid`` has exited (or is a zombie) within ``within_s`` seconds (a real
    process's life: real time)."""

    def ended() -> bool:
        try:
            state = Path(f"/proc/{pid}/status").read_text().split("State:")[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        return state == "Z"

    return eventually(ended, within_s, every=0.02)


def _check_chunks(chunks: list[AudioChunk]) -> None:
    start = 0
    for chunk in chunks:
        assert chunk.samples.dtype == np.int16
        assert chunk.phonemes[0].offset == start
        assert all(start <= m.offset < start + len(chunk.samples) for m in chunk.phonemes)
        start += len(chunk.samples)


def test_worker_speaks_like_the_voice_in_process(
    worker_engine: PiperEngine, piper: PiperEngine
) -> None:
    worker_engine.cache.clear()
    piper.cache.clear()
    there = list(worker_engine.synthesize(TEXT, "en-US", Cancel()))
    here = list(piper.synthesize(TEXT, "en-US", Cancel()))

    assert worker_engine.sample_rate == piper.sample_rate == 22050
    assert len(there) == len(here) >= 3
    assert [[m.phoneme for m in c.phonemes] for c in there] == [
        [m.phoneme for m in c.phonemes] for c in here
    ]
    assert [[w.char for w in c.words] for c in there] == [[w.char for w in c.words] for c in here]
    _check_chunks(there)
    for a, b in zip(there, here, strict=True):  # the same speech, within Piper's own noise
        assert 0.75 < len(a.samples) / len(b.samples) < 1.33
        assert int(np.abs(a.samples.astype(np.int32)).max()) > 1000
    assert _worker(worker_engine).phonemize(TEXT) == piper._loaded().phonemize(TEXT)


def test_the_worker_keeps_the_runtimes_cpu_priority(worker_engine: PiperEngine) -> None:
    # at nice 10 a busy machine starved the robot's voice (worker.NICE)
    pid = _worker(worker_engine).pid
    assert pid is not None
    assert os.getpriority(os.PRIO_PROCESS, pid) == os.getpriority(os.PRIO_PROCESS, 0)


def test_cancel_mid_utterance_stops_promptly(worker_engine: PiperEngine) -> None:
    cancel = Cancel()
    got: list[AudioChunk] = []
    began = time.monotonic()
    for chunk in worker_engine.synthesize(LONG, "en-US", cancel):
        got.append(chunk)
        cancel.set()
    assert len(got) == 1  # of 12 sentences
    assert time.monotonic() - began < 5  # loose: all 12 take several seconds on a loaded machine


def test_a_request_left_unread_does_not_confuse_the_next(worker_engine: PiperEngine) -> None:
    voice = _worker(worker_engine)
    chunks = voice.synthesize("One. Two. Three. Four.")  # one chunk a sentence
    first = next(chunks)
    chunks.close()  # a cancel: the worker still sends the other three
    assert len(first.audio_int16_array) > 0
    assert voice.phonemize("Hello") == [["h", "ə", "l", "ˈ", "o", "ʊ"]]
    again = list(voice.synthesize("Hi there."))
    assert len(again) == 1
    assert again[0].phoneme_alignments is not None
    assert sum(a.num_samples for a in again[0].phoneme_alignments) == len(
        again[0].audio_int16_array
    )


def test_killed_worker_is_a_speech_error_then_a_new_one_starts() -> None:
    pytest.importorskip("piper", reason="piper-tts is not installed (pip install 'anima[speech]')")
    engine = PiperEngine(process=True, idle_exit_s=0)
    try:
        engine.load()
        voice = _worker(engine)
        pid = voice.pid
        assert pid is not None
        chunks = engine.synthesize(LONG, "en-US", Cancel())
        next(chunks)
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(SpeechError, match=r"voice worker \(pid \d+\) ended with code -9"):
            list(chunks)
        again = list(engine.synthesize("Still here.", "en-US", Cancel()))
        assert again
        _check_chunks(again)
        assert voice.pid not in (None, pid)
        assert voice.starts == 2
    finally:
        engine.close()


def test_idle_worker_exits_and_the_next_request_starts_another() -> None:
    pytest.importorskip("piper", reason="piper-tts is not installed (pip install 'anima[speech]')")
    engine = PiperEngine(process=True, idle_exit_s=0.3)
    try:
        engine.load()
        voice = _worker(engine)
        pid = voice.pid
        assert pid is not None
        assert _gone(pid), "the idle worker is still running"
        # reaped at once, not left <defunct> in ps until the next request
        assert eventually(lambda: not Path(f"/proc/{pid}").exists(), 5.0), "left a zombie"
        assert voice.pid is None
        assert list(engine.synthesize("Back again.", "en-US", Cancel()))
        assert voice.starts == 2
    finally:
        engine.close()


def test_someone_there_starts_the_idle_worker_again_before_any_sentence() -> None:
    # a cold worker costs the first sentence 1-2 s: a wake, the conversation listening or a
    # person attended to starts it again beforehand (the speech service's _someone_there)
    pytest.importorskip("piper", reason="piper-tts is not installed (pip install 'anima[speech]')")
    engine = PiperEngine(process=True, idle_exit_s=0.3)
    runtime = Runtime(driver=SimDriver(), tts=[engine], audio_sink=NullSink())
    with runtime:
        engine.load()
        voice = _worker(engine)
        pid = voice.pid
        assert pid is not None
        assert _gone(pid), "the idle worker is still running"
        t = runtime.engine.clock.now()
        for quiet in (
            ConversationChanged(t=t, state="thinking", previous="listening"),
            AttentionChanged(t=t, target="idle"),
        ):
            runtime.events.publish(quiet)
        assert runtime.events.flush(5.0)  # delivered
        assert voice.pid is None  # nobody there: it stays gone
        runtime.events.publish(ConversationChanged(t=t, state="listening", previous="idle"))
        assert eventually(lambda: voice.pid is not None, 30.0)
        assert voice.starts == 2


def test_a_runtime_stops_promptly_while_its_worker_still_loads_the_voice() -> None:
    # on a busy machine the worker's load took longer than serve's 15 s to stop: the speech
    # thread waited for it, and stop waited for the speech thread. A worker frozen mid-load
    # (SIGSTOP) stands for that: stop ends it (stdin closed, 2 s, killed)
    pytest.importorskip("piper", reason="piper-tts is not installed (pip install 'anima[speech]')")
    engine = PiperEngine(process=True, idle_exit_s=0)
    runtime = Runtime(driver=SimDriver(), tts=[engine], audio_sink=NullSink())
    # the start waits for the voice: it runs on its own thread while the worker is frozen
    starting = threading.Thread(target=runtime.start, daemon=True)
    starting.start()
    try:
        assert eventually(lambda: isinstance(engine._voice, VoiceWorker), 10.0)
        voice = engine._voice  # not _worker(): that waits for the start
        assert isinstance(voice, VoiceWorker)
        assert eventually(lambda: voice._starting is not None, 10.0)
        loading = voice._starting
        assert loading is not None
        os.kill(loading.pid, signal.SIGSTOP)
        engine.close()  # what the runtime's stop does first: the start goes on without it
        starting.join(30.0)
        assert not starting.is_alive()
        t0 = time.monotonic()
        runtime.stop()
        assert time.monotonic() - t0 < 8.0
        assert loading.poll() is not None  # no worker left behind
    finally:
        runtime.stop()
        engine.close()


def test_close_ends_the_worker_and_a_later_use_starts_another(worker_engine: PiperEngine) -> None:
    voice = _worker(worker_engine)
    pid = voice.pid
    assert pid is not None
    worker_engine.close()
    assert _gone(pid, within_s=0.1)
    assert voice.phonemize("Hi") == [["h", "ˈ", "a", "ɪ"]]
    assert voice.pid not in (None, pid)


PARENT = """
import sys, time
from anima.speech.piper.process import VoiceWorker
from anima.speech.piper.voice import voice_files
worker = VoiceWorker(*voice_files(None, None), idle_exit_s=0)
worker.start()
print(worker.pid, flush=True)
time.sleep(60)
"""


def test_worker_exits_when_its_parent_dies() -> None:
    pytest.importorskip("piper", reason="piper-tts is not installed (pip install 'anima[speech]')")
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        pid = int(parent.stdout.readline())
        assert not _gone(pid, within_s=0)
        parent.kill()  # no clean-up runs: only the end of its pipe tells the worker
        parent.wait()
        assert _gone(pid), "the worker outlived its parent"
    finally:
        parent.kill()
        parent.wait()
        if parent.stdout is not None:
            parent.stdout.close()


def test_a_worker_whose_runtime_left_while_it_loaded_exits_quietly() -> None:
    """The runtime stopped while a worker it had just started still loaded the voice (a wake
    heard during the stop warmed it): the worker's "ready" meets a closed pipe. It exits with
    0 and no traceback (one printed into `anima serve`'s output, found by
    tests/test_serve_audio_in.py once the voice loaded faster)."""
    pytest.importorskip("piper", reason="piper-tts is not installed (pip install 'anima[speech]')")
    from anima.speech.piper import worker as worker_module

    model, config = voice_files(None, None)
    argv = [sys.executable, "-P", worker_module.__file__, str(model), str(config or ""), "0"]
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None
    proc.stdout.close()  # the runtime's end of the replies, gone before the voice is loaded
    try:
        _out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0
    assert b"Traceback" not in err, err.decode(errors="replace")


def test_a_voice_the_worker_cannot_load_is_a_speech_error(tmp_path: Path) -> None:
    pytest.importorskip("piper", reason="piper-tts is not installed (pip install 'anima[speech]')")
    _, config = voice_files(None, None)
    model = tmp_path / "broken.onnx"
    model.write_bytes(b"not a model")
    worker = VoiceWorker(model, config, idle_exit_s=0)
    with pytest.raises(SpeechError, match=r"cannot load voice .*broken\.onnx in its worker"):
        worker.start()
    assert worker.pid is None


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), 86401.0])
def test_idle_exit_must_be_zero_or_seconds(bad: float) -> None:
    with pytest.raises(ConfigError, match=r"speech\.piper_idle_exit_s must be 0 \(the worker"):
        SpeechConfig(piper_idle_exit_s=bad)


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_the_engine_refuses_a_bad_idle_exit(bad: float) -> None:
    with pytest.raises(ValueError, match="idle_exit_s must be ≥ 0 and finite"):
        PiperEngine(process=True, idle_exit_s=bad)


def test_config_defaults_run_the_voice_in_its_own_process() -> None:
    config = SpeechConfig()
    assert (config.piper_process, config.piper_idle_exit_s) == (True, 120.0)
    assert SpeechConfig(piper_idle_exit_s=0).piper_idle_exit_s == 0
