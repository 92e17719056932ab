"""How the reading of a request changes what the robot does: Whisper's best reading alone, with
its other readings, and with reading again (docs/listening.md, *Other readings*, *Reading
again*).

Every request of a split of the conversation set (``benchmarks/conversation/``) is spoken by
each voice in each room of the conversation bench (push-to-talk audio: the request alone, 0.3 s
of the room before and after), decoded once by Whisper as the runtime runs it (beam 5, the
prompt of each kind of action in turn), and understood three ways with the shipped code:

- ``best``: the best reading only;
- ``others``: :func:`~anima.agent.understanding.readings.pick_reading` over its other readings;
- ``again``: then, when it still reads as nothing, the utterance read again with hints
  (:meth:`~anima.listening.whisper.asr.WhisperAsr.reread`,
  :func:`~anima.agent.understanding.readings.reread_reading`).

Each is judged by the conversation bench's rules (``anima.bench.conversation.judge``) on what the
understanding would do — no runtime loop, no wake, no end of turn — so a change to the reading
rules is measured in minutes (dev: 1212 trials, ~5 min on two cores).

    python benchmarks/readings.py --split dev
    python benchmarks/readings.py --split heldout --voices espeak-us --noises clean,babble-15
"""

from __future__ import annotations

import argparse
import itertools
import time
from collections import Counter

import numpy as np

from anima.agent.understanding import Understanding, asr_phrases, prompt_phrases, understand
from anima.agent.understanding.readings import hints, pick_reading, reread_reading
from anima.agent.vocabulary import robot_registry
from anima.bench.conversation.audio import NOISES, VOICES, Room, Speaker
from anima.bench.conversation.conversation import bench_config
from anima.bench.conversation.judge import Observed, judge
from anima.bench.conversation.requests import load_requests
from anima.bench.measure import percentile
from anima.listening.whisper.asr import WhisperAsr
from anima.runtime import Runtime

STEPS = ("best", "others", "again")
STOPPING = frozenset({"stop", "stop_walking", "finish"})


def observed(reading: Understanding) -> Observed:
    """What the robot would do for ``reading``, as the judge reads a trial."""
    if reading.kind == "act":
        names = {a.split("(")[0] for a in reading.actions}
        return Observed(plans=[tuple(reading.actions)], pre_cut=names <= STOPPING)
    return Observed(spoken=[reading.response])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "heldout"), default="dev")
    parser.add_argument("--voices", default=",".join(VOICES))
    parser.add_argument("--noises", default="clean,white-25,babble-15")
    parser.add_argument("--limit", type=int, default=None, help="at most this many requests")
    args = parser.parse_args()
    voices, noises = args.voices.split(","), args.noises.split(",")
    for name in (*voices, *noises):
        if name not in VOICES and name not in NOISES:
            parser.error(f"unknown voice or noise {name!r}")
    runtime = Runtime(bench_config(None))  # never started: its library and registry only
    runtime.library.load()
    registry = robot_registry(runtime)
    requests = load_requests(registry, args.split)[: args.limit]
    asr = WhisperAsr(vocabulary=prompt_phrases(registry), wake_phrase="hey robot", partials=False)
    asr.load()
    phrases = asr_phrases(registry)

    def read(text: str) -> Understanding:
        return understand(text, registry)

    speaker = Speaker()
    rooms = {n: Room(n, speaker) for n in noises}
    right: Counter[str] = Counter()
    outcomes: dict[str, Counter[str]] = {s: Counter() for s in STEPS}
    rereads: list[float] = []
    t0 = time.monotonic()
    trials = list(itertools.product(requests, voices, noises))
    for request, voice, noise in trials:
        room = rooms[noise]
        said = speaker.say(voice, request.text)
        room.level_for(said)
        decoded = asr.transcribe(np.concatenate([room.quiet(0.3), room.mix(said), room.quiet(0.3)]))
        asr.last = decoded  # as the listener's final leaves it
        readings = {"best": read(decoded.text)}
        _, readings["others"] = pick_reading(decoded.text, decoded.alternatives, read)
        readings["again"] = readings["others"]
        if readings["others"].kind == "not_understood" and decoded.text:
            began = time.perf_counter()
            again = asr.reread(decoded.text, hints(decoded.text, phrases))
            rereads.append((time.perf_counter() - began) * 1e3)
            found = reread_reading(decoded.text, again, read)
            if found is not None:
                readings["again"] = found[1]
        for step in STEPS:
            verdict = judge(request, observed(readings[step]), registry)
            right[step] += verdict.correct
            outcomes[step][verdict.outcome] += 1
    asr.close()
    n = max(1, len(trials))
    print(f"{args.split}: {len(trials)} trials ({len(requests)} requests × {len(voices)} voices "
          f"× {len(noises)} rooms) in {time.monotonic() - t0:.0f} s")  # fmt: skip
    for step in STEPS:
        print(f"  {step:7} {100 * right[step] / n:5.1f} %  {dict(outcomes[step])}")
    if rereads:
        print(f"  read again: {len(rereads)} times, p50 {percentile(rereads, 50):.0f} ms")


if __name__ == "__main__":
    main()
