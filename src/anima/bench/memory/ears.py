"""The memory bench's ears: a line said by a TTS voice, heard by Whisper tiny.en and read as
the conversation reads a final."""

from __future__ import annotations

from collections.abc import Callable

from anima.agent.understanding.result import Understanding
from anima.agent.vocabulary import builtin_registry
from anima.listening.whisper.model import Decoded


class Ears:
    """Text said by a TTS voice and heard by Whisper tiny.en with the rule planner's
    vocabulary, and read as the conversation reads a final (:meth:`hear`: the best reading,
    else another of the beam's, else the utterance read again with the nearest command
    phrases — :func:`~anima.agent.understanding.readings.choose_reading`, with the planner's
    own understanding, memory included). Each text is said and decoded once."""

    def __init__(self, voice: str) -> None:
        from anima.agent.understanding import asr_phrases, prompt_phrases
        from anima.bench.conversation.audio import Speaker
        from anima.listening.whisper.asr import WhisperAsr

        self.voice = voice
        self.speaker = Speaker()
        self.speaker.engine(voice)  # loaded now: a missing engine is said before any trial
        self.phrases = asr_phrases(builtin_registry())
        self.asr = WhisperAsr(vocabulary=prompt_phrases(builtin_registry()), partials=False)
        self.asr.load()
        self.decoded: dict[str, Decoded] = {}
        self.heard: dict[str, str] = {}  # what each text was last read as
        self.read_otherwise = 0  # readings chosen other than the best (another, read again)

    def hear(self, text: str, understand: Callable[[str], Understanding] | None = None) -> str:
        from anima.agent.understanding.readings import choose_reading

        if text not in self.decoded:
            self.decoded[text] = self.asr.transcribe(self.speaker.say(self.voice, text))
        decoded = self.asr.last = self.decoded[text]  # reread() reads the last final again
        best = decoded.text.strip()
        if understand is None or not best:
            self.heard[text] = best
            return best
        chosen, how = choose_reading(
            decoded.text, decoded.alternatives, understand,
            reread=self.asr.reread, phrases=self.phrases,
        )  # fmt: skip
        self.read_otherwise += bool(how)
        self.heard[text] = chosen.strip()
        return self.heard[text]

    def close(self) -> None:
        self.asr.close()
