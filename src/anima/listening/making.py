"""The whole listener, made from its config in one call: :func:`make_listener`.

The source (``agent.audio_in``), the echo canceller in front of it (``listen.duplex``,
``listen.echo``), and, inside the :class:`~anima.listening.listener.Listener`, the recognizer,
wake spotter, VAD and turn detector are each chosen through their registries
(:mod:`anima.config.listening_parts`), never an ``if`` on a name. Nothing is loaded:
:meth:`Listener.prepare` / :meth:`Listener.start` load the models and open the source.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from anima.choices import AsrMode
from anima.listening.listener import Listener
from anima.listening.makers import make_source, recognizer_name

if TYPE_CHECKING:
    from anima.clock import Clock
    from anima.config.listening import ListenConfig
    from anima.listening.results import ListenResult
    from anima.listening.sources import AudioSource
    from anima.speech.reference import PlaybackReference

# the phrases a recognizer is given, or what gives them for the one chosen (whisper | pocketsphinx)
Phrases = Sequence[str] | Callable[[str], Sequence[str]]


def make_listener(
    config: ListenConfig,
    source: str | AudioSource,
    *,
    phrases: Phrases = (),
    free_speech: bool = False,
    echo: bool = True,
    playback: PlaybackReference | None = None,
    results: Callable[[ListenResult], None] | None = None,
    clock: Clock | None = None,
) -> Listener | None:
    """The listener ``config`` describes, on ``source`` (``agent.audio_in``'s name or a ``.wav``
    path, or a source object); None when that names no ears (``none``, or ``auto`` on a machine
    without a microphone).

    ``phrases``: the command phrases (pocketsphinx's grammar, Whisper's bias), or a function of
    the recognizer's name that gives them. ``free_speech``: what is heard goes to a planner that
    reads any words (an LLM), so pocketsphinx listens with its language model, not a grammar.
    ``playback``: what the robot's speaker plays, for the echo canceller (``listen.duplex``: a
    :class:`~anima.errors.ConfigError` without it; ``echo=False``: none, the speaker is not
    near this microphone). ``results``: the one consumer of everything
    the listener sends up (:mod:`anima.listening.results`)."""
    made = make_source(source) if isinstance(source, str) else source
    if made is None:
        return None
    if config.duplex and echo:
        from anima.listening.echo.source import echo_cancelled

        made = echo_cancelled(made, config, playback)
    asr = recognizer_name(config)
    if free_speech and asr == "pocketsphinx":
        # a grammar would force every request into a known phrase (Whisper is open already)
        config = replace(config, asr_mode=AsrMode.LM)
    return Listener(
        made, config=config, phrases=phrases(asr) if callable(phrases) else phrases,
        results=results, clock=clock,
    )  # fmt: skip
