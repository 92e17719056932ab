"""The system prompts of the LLM planners, written from the action registry."""

from __future__ import annotations

from anima.agent.actions import ActionRegistry

_ROLE = (
    "You are the mind of a friendly social robot. A person talks to you; you answer in one or "
    "two short spoken sentences and make the robot act. Speak plainly: your words are read "
    "aloud, so no lists, markup or emoji."
)

_FEEDBACK = (
    "After the actions have run you receive a message starting with 'Robot feedback:' that says "
    "what succeeded, what failed and why, or that the person INTERRUPTED the robot; answer it "
    "the same way (more actions to recover, or just words). A plan that does not validate is "
    "refused before anything moves and the reason comes back as robot feedback. Call finish() "
    "when the person's task is complete or they say goodbye."
)


def markers_prompt(registry: ActionRegistry, most: int = 24) -> str:
    """How a reply times gestures to its words (annotated speech), with the gesture names the
    registry's ``play_animation`` accepts (at most ``most`` of them); "" without it."""
    act = registry.get("play_animation")
    if act is None:
        return ""
    names = [str(c) for c in (act.param("name").choices or ())][:most]
    if not names:
        return ""
    return (
        "The one markup allowed: your spoken words may carry gestures timed to them: "
        "^start(name) starts one as the "
        "next word is spoken, ^run(name) plays one to its end and then speaks on, for example "
        "'Hello! ^start(nod) Nice to meet you.' Gestures: " + ", ".join(names) + "."
    )


def tools_prompt(registry: ActionRegistry, instructions: str = "") -> str:
    """Tools mode: the actions are the tools; several calls run in order."""
    parts = [
        _ROLE,
        "To act, call the tools: each call is one action and the calls run one after the other, "
        "in the order you give them. Call no tool when nothing should move. Use the short "
        "names the tools offer (wave, nod, left, up).",
        _FEEDBACK,
    ]
    if markers := markers_prompt(registry):
        parts.insert(1, markers)
    if instructions.strip():
        parts.append(instructions.strip())
    return "\n\n".join(parts)


def json_prompt(registry: ActionRegistry, instructions: str = "") -> str:
    """JSON mode: the seed's reply object, with the actions described in the prompt."""
    lines = [f"- {a.usage()}: {a.summary}" for a in registry]
    parts = [
        _ROLE,
        "Always answer with exactly one JSON object and nothing else, its keys in this order "
        "(the actions first, then the words):\n"
        '{"actions": ["<action call>", ...], "response": "<what to say>", '
        '"plan": "<optional: your plan in a few words>"}\n'
        "Each action is one call of an action below with literal arguments only, for example "
        "play_animation(name='nod') or say(text='Hello!'). They run in order. Use an empty list "
        "when nothing should move. Only these actions exist:\n" + "\n".join(lines),
        _FEEDBACK,
    ]
    if markers := markers_prompt(registry):
        parts.insert(1, markers)
    if instructions.strip():
        parts.append(instructions.strip())
    return "\n\n".join(parts)
