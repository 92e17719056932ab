"""Who the robot is: one file, ``persona.md`` (``agent.persona``; docs/agent.md, *The persona*).

YAML front matter between two ``---`` lines, then a Markdown body::

    ---
    name: Ada                       # what it calls itself (else agent.name)
    voice: piper                    # the TTS engine it speaks with first (piper | espeak | azure)
    locale: en-GB                   # what say() speaks in (else agent.locale)
    greeting: Hello! I'm Ada, the museum's guide.
    made_by: the museum's robotics club
    actions: [play_animation, look_at_target, say]   # what "what can you do" offers
    talks_about: [the museum, its exhibits, robots]
    never_talks_about: [politics, medical advice]
    ---
    You are Ada, a friendly guide robot in a science museum. …

Every key is optional; an unknown key, a value of the wrong kind, an unknown voice (not one of
the TTS engines) are refused when the file is read, by name and line; an action the robot does
not have is refused when the agent is built (:meth:`Persona.check_actions`). The body is the LLM
planners' and the realtime brain's instructions (before ``agent.instructions``); the rule
planner answers "what's your name", "who made you", "hello" and "what can you do" from the
front matter. anima ships a default (``anima/agent/data/persona.md``): no name (``agent.name``),
the built-in gestures offered, and a short body.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from anima.config import AgentConfig, SpeechConfig
from anima.config.speech_parts import ENGINES
from anima.config.yaml_text import load_yaml
from anima.errors import ConfigError

MAX_BYTES = 200_000  # the file: a page of instructions, not a book
MAX_BODY = 100_000  # characters: sent with every request (agent.instructions' bound)
MAX_NAME = 60
MAX_LINE = 300  # a greeting, made_by: a sentence
MAX_ITEMS = 30
_LOCALE = re.compile(r"^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$")
_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*\r?$\n?", re.DOTALL | re.MULTILINE)
KEYS = (
    "name",
    "voice",
    "locale",
    "greeting",
    "made_by",
    "actions",
    "talks_about",
    "never_talks_about",
)


@dataclass(frozen=True, kw_only=True)
class Persona:
    """One persona file, read and checked (see the module docstring)."""

    source: str  # the file it came from (or "the default persona")
    name: str | None = None
    voice: str | None = None
    locale: str | None = None
    greeting: str = ""
    made_by: str = ""
    actions: tuple[str, ...] = ()  # offered by "what can you do" (empty: the registry's own)
    talks_about: tuple[str, ...] = ()
    never_talks_about: tuple[str, ...] = ()
    instructions: str = ""  # the Markdown body

    def check_actions(self, known: set[str]) -> None:
        """Refuse an offered action the robot's registry does not have, by name."""
        for action in self.actions:
            if action not in known:
                raise ConfigError(
                    f"{self.source}: actions: {action!r} is not an action of this robot "
                    f"(it has: {', '.join(sorted(known))})",
                    key="agent.persona",
                )

    def prompt(self, extra: str = "") -> str:
        """The instructions an LLM gets: the body, what it may and may not talk about, and
        ``extra`` (``agent.instructions``)."""
        parts = [self.instructions.strip()]
        if self.talks_about:
            parts.append("You like to talk about: " + "; ".join(self.talks_about) + ".")
        if self.never_talks_about:
            parts.append(
                "Never talk about: " + "; ".join(self.never_talks_about) + ". If asked, say "
                "politely that it is not something you talk about."
            )
        parts.append(extra.strip())
        return "\n\n".join(p for p in parts if p)

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source, "name": self.name, "voice": self.voice,
            "locale": self.locale, "greeting": self.greeting, "made_by": self.made_by,
            "actions": list(self.actions), "talks_about": list(self.talks_about),
            "never_talks_about": list(self.never_talks_about),
            "instructions": self.instructions,
        }  # fmt: skip


def default_persona_text() -> str:
    return (resources.files("anima.agent") / "data" / "persona.md").read_text(encoding="utf-8")


def load_persona(path: str = "") -> Persona:
    """The persona ``path`` names ("": the shipped default); ConfigError naming the file."""
    if not path:
        return parse_persona(default_persona_text(), "the default persona")
    file = Path(path).expanduser()
    try:
        if file.stat().st_size > MAX_BYTES:
            raise ConfigError(f"{path}: a persona file is at most {MAX_BYTES} bytes")
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"agent.persona: no file {path}", key="agent.persona") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: a persona file is UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror or exc}") from None
    return parse_persona(text, str(path))


def parse_persona(text: str, where: str) -> Persona:
    """A persona from the text of its file (``where`` names it in errors)."""
    front = _FRONT.match(text)
    if front is None:
        if text.lstrip().startswith("---"):
            raise ConfigError(f"{where}: the front matter has no closing '---' line")
        data: Any = {}
        lines: dict[str, int] = {}
        body = text
    else:
        data, lines = load_yaml(front.group(1), where)
        body = text[front.end() :]
        if data is None:
            data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: the front matter must be keys and values (a mapping)")

    def at(key: str) -> str:
        line = lines.get(key)
        return f"{where}:{line + 1}" if line is not None else where  # the front's first line

    for key in data:
        if key not in KEYS:
            raise ConfigError(
                f"{at(str(key))}: unknown key {str(key)[:40]!r} (a persona has: {', '.join(KEYS)})"
            )
    values: dict[str, Any] = {}
    for key in ("name", "voice", "locale", "greeting", "made_by"):
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip() or "\n" in value.strip():
            raise ConfigError(f"{at(key)}: {key} must be one line of text")
        limit = MAX_NAME if key == "name" else MAX_LINE
        if len(value) > limit:
            raise ConfigError(f"{at(key)}: {key} is at most {limit} characters")
        values[key] = value.strip()
    if "voice" in values and values["voice"] not in ENGINES.names:
        raise ConfigError(
            f"{at('voice')}: voice {values['voice']!r} is not a voice anima has "
            f"(one of: {', '.join(ENGINES.names)})"
        )
    if "locale" in values and not _LOCALE.match(values["locale"]):
        raise ConfigError(f"{at('locale')}: locale must look like en-US, got {values['locale']!r}")
    for key in ("actions", "talks_about", "never_talks_about"):
        items = data.get(key)
        if items is None:
            continue
        if (
            not isinstance(items, list)
            or len(items) > MAX_ITEMS
            or not all(isinstance(i, str) and i.strip() and len(i) <= MAX_LINE for i in items)
        ):
            raise ConfigError(f"{at(key)}: {key} must be a list of at most {MAX_ITEMS} short texts")
        values[key] = tuple(i.strip() for i in items)
    body = body.strip()
    if len(body) > MAX_BODY:
        raise ConfigError(f"{where}: the instructions are at most {MAX_BODY} characters")
    return Persona(source=where, instructions=body, **values)


def agent_as(agent: AgentConfig, persona: Persona) -> AgentConfig:
    """``agent`` as the persona makes it: its name and locale where the persona gives them,
    and its instructions the persona's (body, topics) followed by ``agent.instructions``."""
    return dataclasses.replace(
        agent,
        name=persona.name or agent.name,
        locale=persona.locale or agent.locale,
        instructions=persona.prompt(agent.instructions),
    )


def speech_as(speech: SpeechConfig, persona: Persona) -> SpeechConfig:
    """``speech`` with the persona's voice tried first (the others after it, as configured)."""
    if persona.voice is None:
        return speech
    rest = tuple(e for e in speech.engines if e != persona.voice)
    return dataclasses.replace(speech, engines=(persona.voice, *rest))
