"""The configuration sections: one frozen, keyword-only dataclass per part of the runtime.

Each validates itself in ``__post_init__``; a one-line comment on each field says what it is for
or its unit. :mod:`anima.config.loading` builds them from YAML and the environment.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from anima.choices import EmbeddedBroker, HumanoidType, PlannerType, checked
from anima.config.body_language import BodyLanguageConfig
from anima.config.bounds import count, positive, rate, seconds, secret
from anima.config.drivers import (
    DriverConfig,
    ReachyMiniDriverConfig,
    SimDriverConfig,
)
from anima.config.listening import ListenConfig
from anima.config.listening_parts import check_audio_in
from anima.config.mcp import McpConfig
from anima.config.memory import MemoryConfig
from anima.config.planner import PlannerConfig, RulesPlannerConfig, planner_config
from anima.config.speech import SpeechConfig
from anima.config.vision import AttentionConfig, VisionConfig
from anima.errors import ConfigError


@dataclass(frozen=True, kw_only=True)
class BreathingConfig:
    enabled: bool = True  # a slow rise and fall of the head while idle
    period_s: float = 5.0  # one breath, seconds
    amplitude_rad: float = 0.015  # neck pitch swing, radians (0.015 ≈ 0.9°)

    def __post_init__(self) -> None:
        seconds("motion.breathing", 600, period_s=self.period_s)
        if not (math.isfinite(self.amplitude_rad) and 0 <= self.amplitude_rad <= 0.2):
            raise ConfigError("motion.breathing.amplitude_rad must be in [0, 0.2] radians")


@dataclass(frozen=True, kw_only=True)
class BlinkConfig:
    enabled: bool = True  # spontaneous blinks while the eyelids are free
    interval_s: tuple[float, float] = (2.5, 6.0)  # random gap between blinks, seconds
    close_s: float = 0.07  # lids closing, seconds
    hold_s: float = 0.03  # lids shut, seconds
    open_s: float = 0.12  # lids reopening, seconds

    def __post_init__(self) -> None:
        lo, hi = self.interval_s
        if not (0 < lo <= hi <= 3600):  # past an hour it is no blinking: use enabled: false
            raise ConfigError(
                f"motion.blink.interval_s must be 0 < min ≤ max ≤ 3600 s, got {lo:g}, {hi:g}"
            )
        seconds("motion.blink", 2.0, close_s=self.close_s, open_s=self.open_s)  # one blink
        if not (math.isfinite(self.hold_s) and 0 <= self.hold_s <= 2.0):
            raise ConfigError(f"motion.blink.hold_s must be in [0, 2] s, got {self.hold_s:g}")


@dataclass(frozen=True, kw_only=True)
class MotionConfig:
    rate_hz: float = 100.0  # control loop rate, 10–1000 Hz
    blend_s: float = 0.2  # min-jerk blend from the last commanded frame into every move
    stop_s: float = 0.15  # clear()/stop: time to decelerate to a hold
    idle_handback_s: float = 0.4  # a channel released by a move blends back into idle this fast
    # smoothing of secondary offsets (20–30 Hz sources); None: 4 Hz, or less at low loop rates
    offset_bandwidth_hz: float | None = None
    offset_max_rate_rad_s: float = 2.5  # slew limit of offset head rotation
    # final part of each wait spent spinning for a precise wake-up; None (auto): no spin where
    # the motion thread's wake-ups are precise without it (real-time priority, or a 1 µs timer
    # slack: Linux), else 0.3 ms (motion/priority.py has the figures)
    spin_s: float | None = None
    stats_window: int = 16384  # ticks kept for the percentiles of engine.stats(), 16–1,000,000
    # SCHED_FIFO priority of the motion thread where the OS allows it (root, CAP_SYS_NICE), so a
    # busy machine cannot hold a tick back (motion/priority.py); 0: normal scheduling
    realtime_priority: int = 10
    # the interpreter's GIL switch interval while the runtime runs: Python's 5 ms let busy
    # threads delay a tick by half a period each time (motion/priority.py); None: leave it
    switch_interval_ms: float | None = 1.0
    breathing: BreathingConfig = field(default_factory=BreathingConfig)
    blink: BlinkConfig = field(default_factory=BlinkConfig)

    def __post_init__(self) -> None:
        positive("motion", offset_max_rate_rad_s=self.offset_max_rate_rad_s)
        # under 10 Hz a move is a slide show (a 0.2 s blend is two frames), and 1e-7 Hz a
        # first tick in four months: a typo, not a wish
        rate("motion", 1000, lowest=10, rate_hz=self.rate_hz)
        # blends and stops are motions of a body: a minute is already far past any real one
        seconds(
            "motion",
            60,
            blend_s=self.blend_s,
            stop_s=self.stop_s,
            idle_handback_s=self.idle_handback_s,
        )
        if self.offset_max_rate_rad_s > 100:  # ≈ 16 turns a second: no head turns that fast
            raise ConfigError(
                f"motion.offset_max_rate_rad_s must be ≤ 100, got {self.offset_max_rate_rad_s:g}"
            )
        bw = self.offset_bandwidth_hz
        if bw is not None and not (math.isfinite(bw) and 0 < bw <= 0.06 * self.rate_hz):
            # the offset filter's explicit integrator is well damped only while ω·dt is small
            raise ConfigError(
                f"motion.offset_bandwidth_hz must be in (0, {0.06 * self.rate_hz:g}] at "
                f"{self.rate_hz:g} Hz, got {bw}"
            )
        if self.spin_s is not None and not (
            math.isfinite(self.spin_s) and 0 <= self.spin_s < 0.5 / self.rate_hz
        ):
            raise ConfigError("motion.spin_s must be ≥ 0 and under half a period")
        # two float64 arrays of this many ticks are allocated at start: 1 M is 16 MB, 2.8 h
        count("motion", 16, 1_000_000, stats_window=self.stats_window)
        count("motion", 0, 99, realtime_priority=self.realtime_priority)  # Linux's FIFO range
        if self.switch_interval_ms is not None and not (
            math.isfinite(self.switch_interval_ms) and 0.1 <= self.switch_interval_ms <= 10
        ):  # under 0.1 ms the interpreter spends its time switching; over 10, a whole period
            raise ConfigError(
                f"motion.switch_interval_ms must be in [0.1, 10], got {self.switch_interval_ms!r}"
            )

    @property
    def period(self) -> float:
        return 1.0 / self.rate_hz

    @property
    def offset_bandwidth(self) -> float:
        """The effective offset smoothing bandwidth in Hz."""
        if self.offset_bandwidth_hz is not None:
            return self.offset_bandwidth_hz
        return min(4.0, 0.06 * self.rate_hz)


@dataclass(frozen=True, kw_only=True)
class BodyConfig:
    # body definition: a checker.ini, or a shipped body's name (nadine, reachy_mini); None: nadine
    checker_ini: str | None = None
    rest_posture: str = "rest"  # where `anima serve` eases the body before exiting


@dataclass(frozen=True, kw_only=True)
class AnimationConfig:
    folders: tuple[str, ...] = ()  # extra folders of *.xml animations, loaded after the shipped
    shipped: bool = True  # load the animations that ship with anima first
    posture_s: float = 0.6  # time to blend into a posture
    reset_s: float = 0.4  # time to return to the default posture before a gesture

    def __post_init__(self) -> None:
        seconds("animation", 60, posture_s=self.posture_s, reset_s=self.reset_s)
        if len(self.folders) > 100:  # each is globbed on every reload
            raise ConfigError(f"animation.folders: at most 100 folders, got {len(self.folders)}")


@dataclass(frozen=True, kw_only=True)
class BehaviourConfig:
    """Nadine's rules, with the names of the animations they refer to."""

    default_posture: str = "LOOKUPPostureDefault"  # gestures start here; as a gaze target: clears
    blink_animation: str = "blink"  # the plain blink (an idle layer)
    full_blink_animation: str = "LOOKUPPostureDefaultBlink"  # back to default with a blink
    shutdown_animation: str = "SHUTDOWN_NADINE"
    clearing_animations: tuple[str, ...] = ("LOOKUP_Waving", "SHUTDOWN_NADINE")  # drop the queue
    head_animations: tuple[str, ...] = ("nod", "shake")  # position look-at waits for them
    looping_idle_animations: tuple[str, ...] = ("breathingSlow",)  # idle layers that loop
    look_at_hold_s: float = 2.0  # after a look-at, gestures leave head and eyes alone this long
    full_blink_every_s: float = 8.0  # a full blink after this long with nothing moving
    gaze_dead_zone_rad: float = 0.02  # look-at changes smaller than this are ignored
    gaze_smoothing_s: float = 0.1  # low-pass time constant on look-at targets
    gaze_head_share: float = 0.7  # of a large gaze turn, the part the head takes

    def __post_init__(self) -> None:
        seconds(
            "behaviour",
            3600,
            look_at_hold_s=self.look_at_hold_s,
            full_blink_every_s=self.full_blink_every_s,
        )
        seconds("behaviour", 10, gaze_smoothing_s=self.gaze_smoothing_s)  # a lag, not a pause
        if not (math.isfinite(self.gaze_dead_zone_rad) and 0 <= self.gaze_dead_zone_rad < 0.5):
            raise ConfigError("behaviour.gaze_dead_zone_rad must be in [0, 0.5) radians")
        if not (math.isfinite(self.gaze_head_share) and 0 <= self.gaze_head_share <= 1):
            raise ConfigError("behaviour.gaze_head_share must be in [0, 1]")


MAX_PREFIX = 200  # characters of a topic prefix (a robot's name, not a sentence)


@dataclass(frozen=True, kw_only=True)
class MqttConfig:
    enabled: bool = True  # serve the Nadine MQTT contract
    broker: str = "auto"  # auto (first candidate answering MQTT, else embedded) | embedded | H:P
    candidates: tuple[str, ...] = ("localhost:1883", "emqx:1883")  # probed in order by auto
    embedded_port: int = 1883  # the embedded broker's loopback port (another if taken)
    # the broker anima starts: auto (Mosquitto when installed, else amqtt) | mosquitto | amqtt
    embedded_broker: EmbeddedBroker = EmbeddedBroker.AUTO
    prefix: str = "nadine"  # topic prefix: one per robot on a shared broker
    name: str | None = None  # what anima fleet calls it; None: the prefix
    client_id: str | None = None  # None: anima-<prefix>, stable so the broker keeps the session
    persistent_session: bool = True  # the broker queues QoS 1 commands while the link is down
    stale_after_s: float = 10.0  # commands queued over a longer outage are refused (not estop)
    estop_lane: bool = True  # a second connection hearing only estop: it never waits in a flood
    username: str | None = None
    password: str | None = None
    tls_ca: str | None = None  # CA file: enables TLS
    tls_cert: str | None = None  # client certificate (with tls_key)
    tls_key: str | None = None
    keepalive_s: int = 30
    state_hz: float = 4.0  # retained state messages per second

    def __post_init__(self) -> None:
        if not self.prefix or any(c in self.prefix for c in "#+") or self.prefix.endswith("/"):
            raise ConfigError(f"mqtt.prefix must be a plain topic level, got {self.prefix!r}")
        if not 0 < self.embedded_port < 65536:
            raise ConfigError(f"mqtt.embedded_port out of range: {self.embedded_port}")
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ConfigError("mqtt.tls_cert and mqtt.tls_key go together")
        if len(self.prefix) > MAX_PREFIX or not self.prefix.isprintable():
            raise ConfigError(
                f"mqtt.prefix must be at most {MAX_PREFIX} printable characters, "
                f"got {self.prefix[:40]!r}"
            )
        count("mqtt", 5, 65535, keepalive_s=self.keepalive_s)  # MQTT's keep alive is 16 bits
        broker = checked(EmbeddedBroker, self.embedded_broker, "mqtt.embedded_broker")
        object.__setattr__(self, "embedded_broker", broker)
        rate("mqtt", 100, lowest=0.1, state_hz=self.state_hz)  # one retained message each time
        seconds("mqtt", 86400, stale_after_s=self.stale_after_s)  # a day: beyond, never stale


@dataclass(frozen=True, kw_only=True)
class HumanoidConfig:
    type: HumanoidType = HumanoidType.NONE
    address: str | None = None  # adam: HOST:PORT; None = ip_config.json, else 127.0.0.1:6666
    sim_port: int = 6666  # sim: the gRPC port it serves on (loopback)
    state_hz: float = 2.0  # how often the humanoid's state is read for the runtime's state

    def __post_init__(self) -> None:
        object.__setattr__(self, "type", checked(HumanoidType, self.type, "humanoid.type"))
        if not 0 <= self.sim_port < 65536:
            raise ConfigError(f"humanoid.sim_port out of range: {self.sim_port}")
        rate("humanoid", 100, lowest=0.1, state_hz=self.state_hz)  # a gRPC read each time


PLANNER_TYPES = tuple(PlannerType)  # agent.planner's names (anima.agent.planners.PLANNERS)
MAX_NAME = 60  # characters of agent.name: a name, not a sentence


@dataclass(frozen=True, kw_only=True)
class AgentConfig:
    enabled: bool = False  # run the voice agent inside (anima serve --agent turns it on)
    # which planner decides what the robot does, with its own settings: rules (offline) |
    # openai | dify (anima.config.planner; a name alone is that planner's defaults)
    planner: PlannerConfig = field(default_factory=RulesPlannerConfig)
    name: str = "Anima"  # what the robot calls itself ("what's your name?")
    instructions: str = ""  # extra system-prompt text: the robot's persona, house rules
    user_actions: str | None = None  # module whose register(registry) adds your own actions
    locale: str = "en-US"  # what say() speaks in
    step_timeout_s: float = 60.0  # longest wait for one action's completion event
    stop_on_failure: bool = True  # a failed step cancels the rest of its plan
    feedback_rounds: int = 3  # robot feedback → planner → new plan, at most this often per request
    acknowledge_wake: bool = True  # glance at the person when the wake is heard
    # the conversation's phase (anima.agent.presence): engaged this long after the last turn
    # becomes idle; idle this long becomes sleeping (null: never sleeps); only the wake word,
    # a wake from a door, or push-to-talk wakes it
    engaged_s: float = 20.0
    sleep_after_s: float | None = 600.0
    audio_in: str = (
        "auto"  # what the agent listens to: auto (mic if any) | mic | none | stdin | .wav
    )
    memory: MemoryConfig = field(default_factory=MemoryConfig)  # names and facts, on disk
    persona: str = ""  # who it is: a persona.md file ("": the shipped default; docs/agent.md)

    def __post_init__(self) -> None:
        check_audio_in(self.audio_in)
        object.__setattr__(self, "planner", planner_config(self.planner))
        seconds("agent", 3600, step_timeout_s=self.step_timeout_s)
        seconds("agent", 86_400, engaged_s=self.engaged_s)
        if self.sleep_after_s is not None:
            seconds("agent", 86_400, sleep_after_s=self.sleep_after_s)
        count("agent", 0, 100, feedback_rounds=self.feedback_rounds)  # each is a request
        if len(self.instructions) > 100_000:  # sent with every request
            raise ConfigError(
                f"agent.instructions: at most 100000 characters, got {len(self.instructions)}"
            )
        if not self.name.strip() or len(self.name) > MAX_NAME:  # spoken in a sentence
            raise ConfigError(
                f"agent.name must be 1 to {MAX_NAME} characters, got {self.name[:MAX_NAME]!r}"
            )
        if self.memory.summarise and self.planner.type != "openai":
            raise ConfigError(
                "agent.memory.summarise needs an LLM planner (agent.planner.type: openai): the "
                f"{self.planner.type} planner never summarises a conversation",
                key="agent.memory.summarise",
            )
        if len(self.persona) > 4096 or "\x00" in self.persona:
            raise ConfigError("agent.persona must be a file path", key="agent.persona")
        if self.user_actions is not None and not all(
            part.isidentifier() for part in self.user_actions.split(".")
        ):
            raise ConfigError(
                f"agent.user_actions must be a dotted module name, got {self.user_actions!r}"
            )


@dataclass(frozen=True, kw_only=True)
class WebConfig:
    enabled: bool = True  # serve the dashboard and REST API (anima serve --no-web turns it off)
    host: str = "127.0.0.1"  # loopback by default: anyone who reaches it can move the robot
    port: int = 8080  # 0 picks a free port
    token: str | None = None  # bearer token; required for any non-loopback host, never blank
    updates_hz: float = 30.0  # WebSocket state messages per second per client
    mdns: bool = (
        False  # announce the dashboard on the LAN over mDNS (the mdns extra); never commands
    )
    # slow or idle clients must not hold the process's descriptors (docs/web.md, "Limits"):
    max_connections: int = 256  # open at once, HTTP and WebSocket; well under 1,024 open files
    header_timeout_s: float = 5.0  # a request's headers must arrive within this, else 408
    body_timeout_s: float = 10.0  # then its body (at most 64 KiB) within this
    write_stall_s: float = 10.0  # a client that reads nothing we send for this long is dropped
    max_ws_clients: int = 32  # WebSocket clients at once (each costs a state message per tick)

    def __post_init__(self) -> None:
        if not 0 <= self.port < 65536:
            raise ConfigError(f"web.port out of range: {self.port}")
        loopback = self.host in ("127.0.0.1", "localhost", "::1") or self.host.startswith("127.")
        if self.token:  # "" is no token, as null is (refused below off loopback)
            secret("web", token=self.token)
        if not loopback and not self.token:
            raise ConfigError(f"web.token is required to serve on {self.host!r} (not loopback)")
        rate("web", 1000, lowest=0.1, updates_hz=self.updates_hz)  # per client, a message each
        count("web", 1, 100_000, max_connections=self.max_connections)
        count("web", 1, 10_000, max_ws_clients=self.max_ws_clients)
        seconds("web", 3600, header_timeout_s=self.header_timeout_s)
        seconds("web", 3600, body_timeout_s=self.body_timeout_s)
        seconds("web", 3600, write_stall_s=self.write_stall_s)


@dataclass(frozen=True, kw_only=True)
class ServeConfig:
    status_interval_s: float = 5.0  # one-line status log period
    shutdown_s: float = 1.5  # time allowed to ease to the rest posture on exit

    def __post_init__(self) -> None:
        # under 0.1 s the status line is a flood of the log
        seconds("serve", 86400, shortest=0.1, status_interval_s=self.status_interval_s)
        seconds("serve", 60, shutdown_s=self.shutdown_s)  # SIGTERM waits this long at most


@dataclass(frozen=True, kw_only=True)
class AnimaConfig:
    body: BodyConfig = field(default_factory=BodyConfig)
    motion: MotionConfig = field(default_factory=MotionConfig)
    driver: DriverConfig = field(default_factory=SimDriverConfig)
    animation: AnimationConfig = field(default_factory=AnimationConfig)
    behaviour: BehaviourConfig = field(default_factory=BehaviourConfig)
    body_language: BodyLanguageConfig = field(default_factory=BodyLanguageConfig)
    mqtt: MqttConfig = field(default_factory=MqttConfig)
    web: WebConfig = field(default_factory=WebConfig)  # the dashboard and REST API
    mcp: McpConfig = field(default_factory=McpConfig)  # AI agents over MCP (docs/mcp.md)
    speech: SpeechConfig = field(default_factory=SpeechConfig)
    humanoid: HumanoidConfig = field(default_factory=HumanoidConfig)
    agent: AgentConfig = field(default_factory=AgentConfig)
    listen: ListenConfig = field(default_factory=ListenConfig)  # the agent's ears
    vision: VisionConfig = field(default_factory=VisionConfig)  # a camera and its faces
    attention: AttentionConfig = field(default_factory=AttentionConfig)  # where the robot looks
    serve: ServeConfig = field(default_factory=ServeConfig)
    log_level: str = "INFO"  # logging level name

    def __post_init__(self) -> None:
        if isinstance(self.driver, ReachyMiniDriverConfig) and self.body.checker_ini is None:
            # the driver drives that body only: it needs no second key
            object.__setattr__(self, "body", replace(self.body, checker_ini="reachy_mini"))
        if self.log_level.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
            raise ConfigError(f"log_level must be a logging level name, got {self.log_level!r}")
