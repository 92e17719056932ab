"""``anima bench memory``: what the robot recalls after restarts, what forgetting leaves, and
what recall costs.

- **Recall across restarts** (:func:`run_recall`): the facts of :mod:`.facts` are told over
  three conversations, each on a new store, registry and planner opened on the same file (a
  restart: nobody is named, nothing is held in memory but the file); in a fourth, each person
  says their name and asks every question. A fact is recalled when the answer contains its
  word. Planners: ``rules`` (the offline rule planner, typed text) and ``llm`` (the OpenAI
  planner against a scripted model on 127.0.0.1 that calls ``remember`` when told something
  and, asked a question, answers with the memory of its prompt sharing the most words with
  it). For ``llm`` a fact counts as recalled when it was in the memory block sent with the
  question — what a real model needs; the scripted model's own word matching is no model's.
- **Forgetting** (:func:`run_forget`): after "forget everything about me", the rows, the
  full-text index and the next prompt are searched for each of the person's facts.
- **Cost** (:func:`run_cost`): a store of ``n`` memories (10,000 by default); the time the
  rule planner takes per question with the memory and without it, and the size of the prompt
  block (estimated tokens, :func:`~anima.agent.remembering.tokens_of`).

Plans are validated by the registry and their steps run as the executor runs them (the
actions' own functions with a context), without a robot: memory needs none.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anima.agent.context import ActionContext
from anima.agent.plan import parse_plan
from anima.agent.planners.base import Planner
from anima.agent.remembering import (
    PROMPT_TOKENS,
    Remembering,
    memory_block,
    register_memory,
    tokens_of,
)
from anima.agent.vocabulary import builtin_registry
from anima.bench.measure import percentile
from anima.bench.memory.ears import Ears
from anima.bench.memory.facts import SPLITS, Fact
from anima.bench.memory.model import ReadingModel
from anima.memory.store import MemoryStore

PLANNERS = ("rules", "llm")
RECALL_TARGET = {"rules": 0.90, "llm": 1.0}


@dataclass(frozen=True, kw_only=True)
class Asked:
    fact: Fact
    answer: str
    recalled: bool


@dataclass(frozen=True, kw_only=True)
class RecallResult:
    planner: str
    split: str
    asked: tuple[Asked, ...]
    corrections: int = 0  # "no, I said …" said after a fact was said back wrong

    @property
    def recalled(self) -> int:
        return sum(a.recalled for a in self.asked)

    def line(self) -> str:
        n = len(self.asked)
        target = RECALL_TARGET["llm" if self.planner == "llm" else "rules"]
        return (
            f"recall  {self.planner:<5} {self.split:<8} {self.recalled}/{n} "
            f"({100 * self.recalled / max(1, n):.0f} %; target ≥ {100 * target:.0f} %)"
            + (f"; {self.corrections} corrections" if self.corrections else "")
        )


@dataclass(frozen=True, kw_only=True)
class ForgetResult:
    person: str
    facts: int
    residue_rows: int  # rows and index entries still holding a forgotten fact's words
    in_prompt: int  # forgotten facts still in the next prompt's memory block

    def line(self) -> str:
        return (
            f"forget  {self.person}: {self.facts} facts → residue {self.residue_rows} in the "
            f"file and its index, {self.in_prompt} in the next prompt (target 0)"
        )


@dataclass(frozen=True, kw_only=True)
class CostResult:
    memories: int
    plan_ms_p50: float
    plan_ms_p95: float
    bare_ms_p50: float  # the same questions, the rule planner without memory
    bare_ms_p95: float
    block_tokens_max: int
    block_lines_max: int

    def line(self) -> str:
        added = self.plan_ms_p50 - self.bare_ms_p50
        return (
            f"cost    {self.memories} memories: planning p50 {self.plan_ms_p50:.2f} ms p95 "
            f"{self.plan_ms_p95:.2f} ms, without memory {self.bare_ms_p50:.2f} / "
            f"{self.bare_ms_p95:.2f} ms (recall adds {added:.2f} ms at p50; target ≤ 5); "
            f"prompt block ≤ {self.block_tokens_max} tokens, {self.block_lines_max} memories "
            f"(target ≤ {PROMPT_TOKENS})"
        )


@dataclass(frozen=True, kw_only=True)
class MemoryBenchResult:
    recall: tuple[RecallResult, ...]
    forget: tuple[ForgetResult, ...]
    cost: CostResult | None
    seconds: float
    misses: tuple[str, ...] = field(default=())

    def lines(self) -> list[str]:
        out = [f"anima bench memory — {self.seconds:.1f} s"]
        out += [r.line() for r in self.recall]
        out += [f.line() for f in self.forget]
        if self.cost is not None:
            out.append(self.cost.line())
        out += [f"  missed: {m}" for m in self.misses]
        return out


# ---------------------------------------------------------------------- one conversation
class _Conversation:
    """A planner on the memory file, its plans validated and run step by step."""

    def __init__(
        self,
        path: Path,
        planner_kind: str,
        server: ReadingModel | None,
        ears: Ears | None = None,
    ) -> None:
        self.ears = ears
        self.store = MemoryStore(path)
        self.memory = Remembering(self.store)
        self.registry = builtin_registry()
        register_memory(self.registry, self.memory)
        self.planner = _planner(planner_kind, self.registry, server)
        self.planner.remember_with(self.memory)  # type: ignore[attr-defined]
        # memory's actions need no robot
        self.ctx = ActionContext(robot=None)  # type: ignore[arg-type]

    def say(self, text: str) -> str:
        if self.ears is not None:  # said aloud, heard and read as the conversation does
            understand = getattr(self.planner, "understanding", None)
            text = self.ears.hear(text, understand if callable(understand) else None)
        reply = self.planner.plan(text)
        for step in parse_plan(self.registry, reply.actions).steps:
            step.action.fn(self.ctx, *step.args, **step.kwargs)
        acknowledge = getattr(self.planner, "acknowledge", None)
        if callable(acknowledge):
            acknowledge("done")
        return reply.response

    def close(self) -> None:
        self.planner.close()
        self.store.close()


def _planner(kind: str, registry: Any, server: ReadingModel | None) -> Planner:
    if kind == "rules":
        from anima.agent.planners.rules import RulePlanner

        return RulePlanner(registry)
    from anima.agent.planners.openai import OpenAIPlanner

    assert server is not None
    return OpenAIPlanner(registry, base_url=server.base_url, model="scripted", stream=False)


# ---------------------------------------------------------------------- the runs
def run_recall(
    planner: str,
    split: str,
    workdir: Path,
    *,
    ears: Ears | None = None,
    facts: Sequence[Fact] | None = None,
    correct: bool = False,
) -> RecallResult:
    """Tell the split's facts over three restarts, ask them in a fourth (module docstring);
    ``ears``: each utterance spoken and heard first (the rule planner); ``facts``: these
    instead of the split's (a test's slice); ``correct``: the person hears what the robot
    says back and, when their fact's word is not in it, says "No, I said <word>." (once,
    heard like any line)."""
    facts = SPLITS[split] if facts is None else facts
    heard_as = f"-{ears.voice}" if ears is not None else ""
    heard_as += "-corrected" if correct else ""
    path = workdir / f"{planner}-{split}{heard_as}.sqlite3"
    server = ReadingModel() if planner == "llm" else None
    corrections = 0
    try:
        if server is not None:
            server.start()
            server.reply_each(10_000)
        for session in (1, 2, 3):
            talk = _Conversation(path, planner, server, ears)
            try:
                for person in dict.fromkeys(f.who for f in facts if f.session == session):
                    talk.say(f"My name is {person}.")
                    for fact in facts:
                        if fact.session == session and fact.who == person:
                            said_back = talk.say(fact.tell)
                            if correct and not fact.answered(said_back):
                                talk.say(f"No, I said {fact.word()}.")
                                corrections += 1
            finally:
                talk.close()
        asked: list[Asked] = []
        talk = _Conversation(path, planner, server, ears)
        try:
            for person in dict.fromkeys(f.who for f in facts):
                talk.say(f"My name is {person}.")
                for fact in (f for f in facts if f.who == person):
                    answer = talk.say(fact.ask)
                    if server is not None:  # the model's own reading aside: was it told?
                        ok = fact.answered(server.prompts[-1])
                    else:
                        ok = fact.answered(answer)
                    asked.append(Asked(fact=fact, answer=answer, recalled=ok))
        finally:
            talk.close()
    finally:
        if server is not None:
            server.stop()
    spoken = f"rules, spoken ({ears.voice})" if ears is not None else planner
    spoken += ", corrected" if correct else ""
    return RecallResult(planner=spoken, split=split, asked=tuple(asked), corrections=corrections)


def run_forget(split: str, workdir: Path) -> list[ForgetResult]:
    """Each person of the split: their facts told, then "forget everything about me"; what
    is left of them in the file, its index and the next prompt."""
    facts = SPLITS[split]
    path = workdir / f"forget-{split}.sqlite3"
    talk = _Conversation(path, "rules", None)
    out: list[ForgetResult] = []
    try:
        for person in dict.fromkeys(f.who for f in facts):
            mine = [f for f in facts if f.who == person]
            talk.say(f"My name is {person}.")
            for fact in mine:
                talk.say(fact.tell)
            talk.say("Forget everything about me.")
            residue = sum(talk.store.residue(f.expect.split("|")[0]) for f in mine)
            residue += talk.store.residue(f"my name is {person}")
            talk.say(f"My name is {person}.")  # the next conversation with them
            block = memory_block(talk.memory, " ".join(f.ask for f in mine)).lower()
            in_prompt = sum(f.answered(block) for f in mine)
            talk.say("Forget everything about me.")
            out.append(
                ForgetResult(
                    person=person, facts=len(mine), residue_rows=residue, in_prompt=in_prompt
                )
            )
    finally:
        talk.close()
    return out


_TOPIC_WORDS = (
    "jazz tea coffee cello piano chess football tennis Paris Lyon Porto Oslo Delhi Rome "
    "cats dogs birds garden kitchen office school hospital train bus car bicycle red blue "
    "green yellow May June July pizza pasta rice soup mother father sister brother son "
    "daughter friend teacher nurse doctor engineer physics history music painting"
)
_TOPICS = _TOPIC_WORDS.split()


def run_cost(n: int = 10_000, workdir: Path | None = None, rounds: int = 5) -> CostResult:
    """Planning with ``n`` memories against planning without memory (module docstring)."""
    import random

    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(workdir or tmp) / "cost.sqlite3"
        store = MemoryStore(path, max_memories=max(n, 1))
        people = [f"Person{i}" for i in range(200)] + ["Ana"]
        records = [
            {
                "who": rng.choice(people),
                "what": " ".join(["I", "like", *rng.sample(_TOPICS, 4)]),
                "source": "said",
                "at": 1_700_000_000.0 + i,
            }
            for i in range(n)
        ]
        store.import_records(records)
        memory = Remembering(store)
        registry = builtin_registry()
        register_memory(registry, memory)
        from anima.agent.planners.rules import RulePlanner

        with_memory = RulePlanner(registry)
        with_memory.remember_with(memory)
        bare = RulePlanner(builtin_registry())
        memory.remember("my name is Ana", "Ana")
        questions = [f.ask for f in SPLITS["dev"]] + ["wave", "what can you do", "nod twice"]
        timed: list[float] = []
        plain: list[float] = []
        tokens, lines = 0, 0
        for _ in range(rounds):
            for q in questions:
                t0 = time.perf_counter()
                with_memory.plan(q)
                timed.append(1e3 * (time.perf_counter() - t0))
                t0 = time.perf_counter()
                bare.plan(q)
                plain.append(1e3 * (time.perf_counter() - t0))
                block = memory_block(memory, q)
                tokens = max(tokens, tokens_of(block))
                lines = max(lines, sum(line.startswith("- ") for line in block.splitlines()))
        store.close()
    return CostResult(
        memories=n,
        plan_ms_p50=percentile(timed, 50),
        plan_ms_p95=percentile(timed, 95),
        bare_ms_p50=percentile(plain, 50),
        bare_ms_p95=percentile(plain, 95),
        block_tokens_max=tokens,
        block_lines_max=lines,
    )


def run_memory_bench(
    *,
    planners: Sequence[str] = PLANNERS,
    splits: Sequence[str] = ("dev", "heldout"),
    memories: int = 10_000,
    voices: Sequence[str] = (),
) -> MemoryBenchResult:
    """``voices``: the rule planner's recall again with every utterance spoken by each of
    these TTS voices (:data:`anima.bench.conversation.audio.VOICES`) and heard by Whisper."""
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="anima-bench-memory-") as tmp:
        work = Path(tmp)
        recall = tuple(run_recall(p, s, work) for p in planners for s in splits)
        for voice in voices:
            ears = Ears(voice)
            try:
                recall += tuple(run_recall("rules", s, work, ears=ears) for s in splits)
                recall += tuple(
                    run_recall("rules", s, work, ears=ears, correct=True) for s in splits
                )
            finally:
                ears.close()
        forget = tuple(f for s in splits for f in run_forget(s, work))
        cost = run_cost(memories, work) if memories > 0 else None
    misses = tuple(
        f"{r.planner} {r.split}: {a.fact.who} asked {a.fact.ask!r} → {a.answer!r}"
        for r in recall
        for a in r.asked
        if not a.recalled
    )
    return MemoryBenchResult(
        recall=recall, forget=forget, cost=cost, seconds=time.monotonic() - t0, misses=misses
    )
