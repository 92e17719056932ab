"""The OpenAI-compatible planner against a real (small, local) model: one bounded run.

Each request of the conversation set (``benchmarks/conversation/``) goes to
:class:`~anima.agent.planners.openai.OpenAIPlanner` alone — no runtime loop, no speech, no
motion — with the conversation forgotten before each, and the reply is sorted:

- ``right``: the plan is one the set accepts, or (questions, refusals, chit-chat) no plan and
  words of the expected kind (the bench's own judging rules: ``anima.bench.conversation.judge``);
- ``invalid``: the plan does not validate against the robot's registry (what the robot would
  refuse with "Sorry, I can't do that: …");
- ``wrong``: a valid plan, but not what was meant (or words of the wrong kind);
- ``silent``: no plan and no words;
- ``error``: the planner failed (HTTP error, timeout, malformed tool call: the apology).

Times, from the request: the first sentence handed to the speech (streamed), and the whole
reply (plan assembled). ``anima bench conversation -c … --modes text`` measures the same
planner inside the real conversation (first audio, intent accuracy); this script adds the
planner's own view (valid plans, refusals, errors) and needs no TTS.

    python benchmarks/small_llm.py -c /tmp/smollm.yaml --split dev --max-seconds 180
    python benchmarks/small_llm.py -c /tmp/smollm.yaml --no-stream --json

The server is whatever ``agent.planner.base_url`` names (see docs/agent.md, "Measured against a real
small model", for serving SmolLM2-135M with llama-cpp-python). Nothing here downloads anything.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import sys
import time
from collections import Counter
from typing import Any

from anima.agent.actions import ActionRegistry
from anima.agent.plan import parse_plan
from anima.agent.planners.openai import OpenAIPlanner
from anima.agent.vocabulary import robot_registry
from anima.bench.conversation.conversation import bench_config
from anima.bench.conversation.judge import plan_matches, speech_kind, words
from anima.bench.conversation.requests import Request, load_requests
from anima.config import OpenAIPlannerConfig
from anima.config.loading import load_config
from anima.drivers.sim import SimDriver
from anima.errors import PlanError
from anima.runtime import Runtime


class Stamps:
    """The planner's reply sink: when the first sentence and the plan arrived."""

    def __init__(self, t0: float) -> None:
        self.t0 = t0
        self.first_words_s: float | None = None
        self.plan_s: float | None = None
        self.sentences: list[str] = []

    def actions(self, actions: list[str]) -> None:
        if self.plan_s is None:
            self.plan_s = time.perf_counter() - self.t0

    def words(self, text: str) -> None:
        if self.first_words_s is None:
            self.first_words_s = time.perf_counter() - self.t0
        self.sentences.append(text)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Result:
    text: str
    category: str
    outcome: str  # right | invalid | wrong | silent | error
    actions: list[str]
    said: str
    why: str  # the plan's refusal or the planner's error, briefly
    first_words_s: float | None
    reply_s: float


def judge_reply(
    request: Request, actions: list[str], said: str, error: str | None, registry: ActionRegistry
) -> tuple[str, str]:
    """(outcome, why) for one reply, by the conversation bench's rules where they apply."""
    if error is not None:
        return "error", error[:160]
    if actions:
        try:
            plan = parse_plan(registry, actions)
        except PlanError as exc:
            return "invalid", str(exc)[:160]
        steps = list(plan.texts)  # canonical, as the executor's PlanStarted carries them
        if request.kind == "act":
            ok = any(plan_matches(p, steps, registry) for p in request.plans)
            return ("right" if ok else "wrong"), ""
        if request.kind == "stop":
            names = {s.name for s in plan.steps}
            return ("right" if names <= {"stop", "stop_walking", "finish"} else "wrong"), ""
        if any(s.name != "say" for s in plan.steps):  # a plan of say() alone is speech
            return "wrong", "moved"
        said = " ".join(
            [said, *(str(v) for s in plan.steps for v in (*s.args, *s.kwargs.values()))]
        )
    if not said and not actions:
        return "silent", ""
    if request.kind in ("act", "stop"):
        return "wrong", "no plan"
    kind = speech_kind(said)
    if request.kind == "answer":
        ok = kind == "answer" and (not request.words or bool(set(words(said)) & set(request.words)))
    else:
        ok = kind == request.kind
    return ("right" if ok else "wrong"), ""


def run(args: argparse.Namespace) -> dict[str, Any]:
    config = bench_config(load_config(args.config))
    # agent.planner's settings when it is the openai planner, else that planner's defaults
    own = config.agent.planner
    agent = own if isinstance(own, OpenAIPlannerConfig) else OpenAIPlannerConfig()
    agent = dataclasses.replace(agent, stream=not args.no_stream)
    if args.mode:
        agent = dataclasses.replace(agent, mode=args.mode)
    runtime = Runtime(config, driver=SimDriver())  # never started: only its registry is used
    runtime.library.load()  # the gestures play_animation accepts
    registry = robot_registry(runtime)
    requests = interleaved([r for s in args.splits for r in load_requests(registry, s)])
    if args.limit:
        requests = requests[: args.limit]
    planner = OpenAIPlanner.from_config(agent, registry, instructions=config.agent.instructions)
    results: list[Result] = []
    load_before = os.getloadavg()
    t_start = time.monotonic()
    try:
        for request in requests:
            if time.monotonic() - t_start > args.max_seconds:
                break
            planner.reset()
            t0 = time.perf_counter()
            stamps = Stamps(t0)
            reply = planner.plan(request.text, stamps)
            reply_s = time.perf_counter() - t0
            said = reply.response or " ".join(stamps.sentences)
            outcome, why = judge_reply(request, reply.actions, said, reply.error, registry)
            results.append(
                Result(
                    text=request.text, category=request.category, outcome=outcome,
                    actions=list(reply.actions), said=said[:160], why=why,
                    first_words_s=stamps.first_words_s, reply_s=reply_s,
                )
            )  # fmt: skip
            if args.detail:
                r = results[-1]
                print(
                    f"{r.outcome:8} {r.reply_s:5.2f}s {r.text!r} → {r.actions} {r.said!r} {r.why}"
                )
    finally:
        planner.close()
    return summary(results, agent, load_before, time.monotonic() - t_start)


def interleaved(requests: list[Request]) -> list[Request]:
    """One of each category in turn, so a run cut short by time still covers them all."""
    by_category: dict[str, list[Request]] = {}
    for r in requests:
        by_category.setdefault(r.category, []).append(r)
    turns = itertools.zip_longest(*by_category.values())
    return [r for turn in turns for r in turn if r is not None]


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summary(
    results: list[Result],
    agent: OpenAIPlannerConfig,
    load_before: tuple[float, ...],
    seconds: float,
) -> dict[str, Any]:
    outcomes = Counter(r.outcome for r in results)
    with_plan = [r for r in results if r.actions]
    oov = [r for r in results if r.category == "oov"]
    first = [r.first_words_s for r in results if r.first_words_s is not None]
    whole = [r.reply_s for r in results if r.outcome != "error"]
    return {
        "model": agent.model,
        "mode": agent.mode,
        "stream": agent.stream,
        "requests": len(results),
        "outcomes": dict(outcomes),
        "right_rate": outcomes["right"] / len(results) if results else None,
        "plans": len(with_plan),
        "valid_plan_rate": (
            sum(r.outcome != "invalid" for r in with_plan) / len(with_plan) if with_plan else None
        ),
        "oov_refused": sum(
            r.outcome != "error" and not r.actions and speech_kind(r.said) == "refuse" for r in oov
        ),  # the apology for a failed request ("I can't think right now") is no refusal
        "oov": len(oov),
        "first_sentence_s": {"p50": _pct(first, 0.5), "p95": _pct(first, 0.95), "n": len(first)},
        "reply_s": {"p50": _pct(whole, 0.5), "p95": _pct(whole, 0.95), "n": len(whole)},
        "by_category": {
            c: f"{sum(r.outcome == 'right' for r in results if r.category == c)}/"
            f"{sum(r.category == c for r in results)}"
            for c in sorted({r.category for r in results})
        },
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "seconds": seconds,
        "trials": [dataclasses.asdict(r) for r in results],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-c", "--config", required=True, help="YAML config naming the planner's server")
    p.add_argument("--split", default="dev", choices=("dev", "heldout", "both"))
    p.add_argument("--mode", choices=("tools", "json"), help="override agent.planner.mode")
    p.add_argument("--no-stream", action="store_true", help="ask for one JSON body")
    p.add_argument("--limit", type=int, default=0, help="at most this many requests")
    p.add_argument("--max-seconds", type=float, default=180.0, help="no request starts after")
    p.add_argument("--detail", action="store_true", help="print each reply")
    p.add_argument("--json", action="store_true", help="print JSON (with every trial)")
    args = p.parse_args(argv)
    args.splits = ("dev", "heldout") if args.split == "both" else (args.split,)
    out = run(args)
    if args.json:
        print(json.dumps(out, indent=1, default=str))
        return 0
    out.pop("trials")
    for key, value in out.items():
        print(f"{key:18} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
