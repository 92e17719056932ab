"""``agent.planner``: one dataclass per planner ``type``, each with only its own settings.

``agent.planner: openai`` (a name) is the ``openai`` section with its defaults; a mapping sets
them (``agent.planner: {type: openai, model: qwen2.5}``). The flat keys of before
(``agent.base_url``, ``agent.model``, …) are moved here when a file is loaded
(:data:`MOVED_KEYS`), with a warning naming the new key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Literal

from anima.choices import PlannerMode, PlannerType, checked
from anima.config.bounds import ENV_PREFIX, count, seconds
from anima.errors import ConfigError

SECTION = "agent.planner"


def _url(value: str) -> None:
    if not value.startswith(("http://", "https://")):
        raise ConfigError(
            f"{SECTION}.base_url must be an http(s) URL, got {value!r}", key=f"{SECTION}.base_url"
        )


def _key_env(value: str | None) -> None:
    if value is not None and (not value or value.startswith(ENV_PREFIX)):
        # ANIMA_* is the config's own prefix (ANIMA_<SECTION>__<KEY>, or a top-level key): a
        # secret there could be read as a key, or be taken for one by whoever reads the setup
        raise ConfigError(
            f"{SECTION}.api_key_env must be a variable name not starting with "
            f"{ENV_PREFIX}, got {value!r}",
            key=f"{SECTION}.api_key_env",
        )


def _timeout(value: float) -> None:
    # a person waits for the answer: an hour is past any wait that means something
    seconds(SECTION, 3600, timeout_s=value)


@dataclass(frozen=True, kw_only=True)
class RulesPlannerConfig:
    """``agent.planner: rules``: offline, from the actions' phrases (the default)."""

    type: Literal["rules"] = "rules"


@dataclass(frozen=True, kw_only=True)
class OpenAIPlannerConfig:
    """``agent.planner: openai``: an OpenAI-compatible server (Ollama, llama.cpp, vLLM, …)."""

    type: Literal["openai"] = "openai"
    base_url: str = "http://127.0.0.1:11434/v1"  # the server's …/v1 (this default: Ollama's)
    model: str = "llama3.2"  # the model name the server knows
    api_key_env: str | None = None  # variable holding the key; None: OPENAI_API_KEY
    mode: PlannerMode = PlannerMode.TOOLS  # tool calls → actions, or the seed's JSON reply
    timeout_s: float = 20.0  # one request, seconds: then a spoken apology, no motion
    temperature: float = 0.2  # low, so plans are repeatable
    # the longest reply asked for, in tokens (a plan and a few sentences take ~50-300);
    # without it a small model in JSON mode wrote until its context was full, past timeout_s
    max_tokens: int = 512
    max_history: int = 40  # conversation messages kept (the system prompt is extra)
    stream: bool = True  # stream replies (SSE), speak the first sentence as it arrives

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", checked(PlannerMode, self.mode, f"{SECTION}.mode"))
        _url(self.base_url)
        _key_env(self.api_key_env)
        _timeout(self.timeout_s)
        if not (math.isfinite(self.temperature) and 0 <= self.temperature <= 2):
            raise ConfigError(
                f"{SECTION}.temperature must be in [0, 2], got {self.temperature}",
                key=f"{SECTION}.temperature",
            )
        # every message is sent with each request: 10,000 is past any model's context
        count(SECTION, 2, 10_000, max_history=self.max_history)
        count(SECTION, 16, 32_768, max_tokens=self.max_tokens)


@dataclass(frozen=True, kw_only=True)
class DifyPlannerConfig:
    """``agent.planner: dify``: a Dify app's chat API (its streaming blocks, its conversation)."""

    type: Literal["dify"] = "dify"
    base_url: str = "http://127.0.0.1/v1"  # the app's API: self-hosted …/v1, or Dify Cloud's
    api_key_env: str | None = None  # variable holding the app's key; None: DIFY_API_KEY
    user: str = "anima"  # the end-user id sent with every query
    timeout_s: float = 20.0  # one request, seconds: then a spoken apology, no motion

    def __post_init__(self) -> None:
        _url(self.base_url)
        _key_env(self.api_key_env)
        _timeout(self.timeout_s)
        if not self.user.strip() or len(self.user) > 255:
            raise ConfigError(
                f"{SECTION}.user must be 1 to 255 characters, got {self.user[:60]!r}",
                key=f"{SECTION}.user",
            )


DEFAULT_PERSONA = (
    "You are a small, friendly social robot with a head, eyes and a voice. Keep replies short "
    "and spoken: one or two sentences. Use your tools to move, gesture and look; never describe "
    "an action you did not call."
)


@dataclass(frozen=True, kw_only=True)
class RealtimeSessionConfig:
    """What every realtime brain (a speech-to-speech model over a WebSocket) is set with; each
    brain's section adds its own defaults (:class:`RealtimePlannerConfig`,
    :class:`GeminiLivePlannerConfig`). Not a planner: it hears the microphone and speaks."""

    DEFAULT_KEY_ENV: ClassVar[str] = ""
    url: str  # the session's WebSocket
    model: str  # the model the session asks for
    api_key_env: str | None = None  # variable holding the key; None: the brain's default
    voice: str  # the model's voice (a name the server knows)
    instructions: str = DEFAULT_PERSONA  # the persona (agent.instructions is added after it)
    stall_s: float = 15.0  # no event this long while the model answers: its answer is ended
    # reconnect after a lost socket: the first wait, doubled each time up to the last (jittered)
    reconnect_s: float = 0.5
    reconnect_max_s: float = 30.0
    # privacy: no session and no microphone sent until the wake phrase (listen.wake's spotter,
    # listen.wake_phrase) or a door's wake; closed after agent.engaged_s without a voice
    listen_after_wake: bool = False
    # full duplex with anima's VAD: a voice beginning over the robot pauses its voice at once,
    # then the duplex rules stop it or let it resume (a rule's word or held voice comes too
    # late to stop it within 100 ms of the onset; docs/realtime.md, Barge-in)
    yield_at_onset: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.yield_at_onset, bool):
            raise ConfigError(
                f"{SECTION}.yield_at_onset must be true or false, "
                f"got {str(self.yield_at_onset)[:40]!r}",
                key=f"{SECTION}.yield_at_onset",
            )
        if not self.url.startswith(("ws://", "wss://")):
            raise ConfigError(
                f"{SECTION}.url must be a ws(s) URL, got {self.url[:80]!r}", key=f"{SECTION}.url"
            )
        _key_env(self.api_key_env)
        for key, value in (("model", self.model), ("voice", self.voice)):
            if not value.strip() or len(value) > 100:
                raise ConfigError(
                    f"{SECTION}.{key} must be 1 to 100 characters, got {value[:100]!r}",
                    key=f"{SECTION}.{key}",
                )
        if len(self.instructions) > 100_000:  # sent with every session
            raise ConfigError(
                f"{SECTION}.instructions: at most 100000 characters, got {len(self.instructions)}",
                key=f"{SECTION}.instructions",
            )
        seconds(SECTION, 3600, stall_s=self.stall_s)
        seconds(SECTION, 3600, reconnect_s=self.reconnect_s, reconnect_max_s=self.reconnect_max_s)
        if self.reconnect_max_s < self.reconnect_s:
            raise ConfigError(
                f"{SECTION}.reconnect_max_s must be at least reconnect_s ({self.reconnect_s:g})",
                key=f"{SECTION}.reconnect_max_s",
            )
        self._check_own()

    def _check_own(self) -> None:
        """A brain's own fields' checks (none by default)."""

    @property
    def key_env(self) -> str:
        """The variable the key is read from."""
        return self.api_key_env or self.DEFAULT_KEY_ENV


@dataclass(frozen=True, kw_only=True)
class RealtimePlannerConfig(RealtimeSessionConfig):
    """``agent.planner: openai_realtime``: a speech-to-speech model over the OpenAI Realtime GA
    protocol (OpenAI, Azure, a local speech-to-speech server; docs/realtime.md)."""

    DEFAULT_KEY_ENV: ClassVar[str] = "OPENAI_API_KEY"
    type: Literal["openai_realtime"] = "openai_realtime"
    url: str = "wss://api.openai.com/v1/realtime"  # the session's WebSocket (?model= is added)
    model: str = "gpt-realtime"  # sent as ?model= and in session.update
    # how the key is sent: "bearer" (Authorization: Bearer, OpenAI) | "api-key" (Azure's
    # header) | "none" (no key: a local speech-to-speech server on this network)
    auth: Literal["bearer", "api-key", "none"] = "bearer"
    voice: str = "marin"  # the model's voice (OpenAI: marin, cedar, alloy, …)

    def _check_own(self) -> None:
        if self.auth not in ("bearer", "api-key", "none"):
            raise ConfigError(
                f"{SECTION}.auth must be bearer, api-key or none, got {str(self.auth)[:40]!r}",
                key=f"{SECTION}.auth",
            )


@dataclass(frozen=True, kw_only=True)
class GeminiLivePlannerConfig(RealtimeSessionConfig):
    """``agent.planner: gemini_live``: a speech-to-speech model over Google's Live API
    (BidiGenerateContent over a WebSocket; docs/realtime.md)."""

    DEFAULT_KEY_ENV: ClassVar[str] = "GEMINI_API_KEY"
    type: Literal["gemini_live"] = "gemini_live"
    # the Live API's WebSocket (?key= is added: Google takes the key in the query)
    url: str = (
        "wss://generativelanguage.googleapis.com/ws/"
        "google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
    )
    model: str = "gemini-3.1-flash-live-preview"  # a Live model (models/ is added in setup)
    voice: str = "Puck"  # a prebuilt voice (Puck, Charon, Kore, Fenrir, Aoede, …)


PlannerConfig = (
    RulesPlannerConfig
    | OpenAIPlannerConfig
    | DifyPlannerConfig
    | RealtimePlannerConfig
    | GeminiLivePlannerConfig
)
PLANNER_CONFIGS: dict[str, type[PlannerConfig]] = {
    PlannerType.RULES: RulesPlannerConfig,
    PlannerType.OPENAI: OpenAIPlannerConfig,
    PlannerType.DIFY: DifyPlannerConfig,
    PlannerType.OPENAI_REALTIME: RealtimePlannerConfig,
    PlannerType.GEMINI_LIVE: GeminiLivePlannerConfig,
}

# the flat agent keys of before → their key in agent.planner (moved when a file is loaded)
MOVED_KEYS: dict[str, str] = {
    "base_url": "base_url",
    "model": "model",
    "api_key_env": "api_key_env",
    "mode": "mode",
    "timeout_s": "timeout_s",
    "temperature": "temperature",
    "max_tokens": "max_tokens",
    "max_history": "max_history",
    "stream": "stream",
    "dify_user": "user",
}


def planner_config(value: object) -> PlannerConfig:
    """``value`` when it is a planner section; a planner's name (``"openai"``) → its defaults."""
    if isinstance(
        value,
        RulesPlannerConfig
        | OpenAIPlannerConfig
        | DifyPlannerConfig
        | RealtimePlannerConfig
        | GeminiLivePlannerConfig,
    ):
        return value
    return PLANNER_CONFIGS[checked(PlannerType, value, f"{SECTION}.type")]()
