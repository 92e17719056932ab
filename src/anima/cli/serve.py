"""`anima serve` and `anima console`: run the runtime until Ctrl-C, SIGTERM or `q`."""

from __future__ import annotations

import logging
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from anima import instances
from anima.cli.common import ConfigOpt, fail
from anima.cli.process import claim_pid_file, process_age_s, raise_open_files_limit
from anima.cli.status import wait as wait_with_status
from anima.errors import AnimaError

if TYPE_CHECKING:
    from anima.cli.process import Reloads, Signals
    from anima.config import AnimaConfig
    from anima.runtime import Runtime

log = logging.getLogger("anima")

RecordOpt = Annotated[
    Path | None, typer.Option(help="Record every frame sent to this JSON Lines file.")
]
SecondsOpt = Annotated[
    float | None, typer.Option(help="Stop after this many seconds (default: until Ctrl-C).")
]
DriverOpt = Annotated[
    str | None,
    typer.Option(
        "--driver", help="Robot driver: sim (default), serial, or reachy_mini (a Reachy Mini)."
    ),
]
BrokerOpt = Annotated[
    str | None,
    typer.Option(
        "--broker",
        help="MQTT broker: auto (first that answers, else embedded), embedded, or HOST:PORT.",
    ),
]
AudioOpt = Annotated[
    str | None,
    typer.Option(
        "--audio-out", help="Speech audio: auto (sound card or null), null, or a .wav path."
    ),
]
HumanoidOpt = Annotated[
    str | None,
    typer.Option(
        "--humanoid", help="none, sim (serve the simulated Adam here) or adam (a real one)."
    ),
]
AgentOpt = Annotated[
    bool, typer.Option("--agent", help="Run the voice agent inside (listen, plan, act).")
]
AudioInOpt = Annotated[
    str | None,
    typer.Option("--audio-in", help="The agent's ears: auto, mic, none, stdin, or a .wav file."),
]
VideoInOpt = Annotated[
    str | None,
    typer.Option(
        "--video-in",
        help="See through a video file or a folder of frames (vision.source: video).",
    ),
]
VideoFpsOpt = Annotated[
    float | None,
    typer.Option("--video-fps", help="Play --video-in at this pace (default: its own)."),
]
NoMqttOpt = Annotated[bool, typer.Option("--no-mqtt", help="Do not serve the MQTT contract.")]
NoWebOpt = Annotated[
    bool, typer.Option("--no-web", help="Do not serve the dashboard and REST API.")
]
PortOpt = Annotated[
    str | None, typer.Option("--port", help="Serial port (default: checker.ini's port).")
]
BodyOpt = Annotated[
    str | None,
    typer.Option("--body", help="The body: nadine (default), reachy_mini, or a checker.ini."),
]
WebPortOpt = Annotated[
    int | None,
    typer.Option(
        "--web-port", help="The dashboard's and REST API's port (web.port; 0: a free one)."
    ),
]
PrefixOpt = Annotated[
    str | None,
    typer.Option(
        "--prefix", help="The MQTT topic prefix: one per robot on a broker (mqtt.prefix)."
    ),
]
MqttPortOpt = Annotated[
    int | None,
    typer.Option(
        "--mqtt-port",
        help="The broker's port on this machine: the one answering there, else one anima starts "
        "there (with --broker embedded: the one it starts; a HOST:PORT broker: that host's port).",
    ),
]


def serve(
    config: ConfigOpt = None,
    record: RecordOpt = None,
    seconds: SecondsOpt = None,
    driver: DriverOpt = None,
    port: PortOpt = None,
    console: Annotated[
        bool, typer.Option("--console", help="Also read operator commands from the terminal.")
    ] = False,
    broker: BrokerOpt = None,
    no_mqtt: NoMqttOpt = False,
    no_web: NoWebOpt = False,
    audio_out: AudioOpt = None,
    humanoid: HumanoidOpt = None,
    agent: AgentOpt = False,
    audio_in: AudioInOpt = None,
    video_in: VideoInOpt = None,
    video_fps: VideoFpsOpt = None,
    body: BodyOpt = None,
    web_port: WebPortOpt = None,
    prefix: PrefixOpt = None,
    mqtt_port: MqttPortOpt = None,
) -> None:
    """Run the runtime on the configured robot (the simulated one by default).

    Logs a status line every few seconds. SIGHUP reloads the animations. Ctrl-C or SIGTERM
    eases the body to its rest posture, then exits.
    """
    run(
        config,
        record=record,
        seconds=seconds,
        driver=driver,
        port=port,
        console=console,
        broker=broker,
        mqtt=not no_mqtt,
        web=not no_web,
        audio_out=audio_out,
        humanoid=humanoid,
        agent=agent,
        audio_in=audio_in,
        video_in=video_in,
        video_fps=video_fps,
        body=body,
        web_port=web_port,
        prefix=prefix,
        mqtt_port=mqtt_port,
    )


def console_command(
    config: ConfigOpt = None,
    driver: DriverOpt = None,
    port: PortOpt = None,
    broker: BrokerOpt = None,
    no_mqtt: NoMqttOpt = False,
    no_web: NoWebOpt = False,
    audio_out: AudioOpt = None,
    web_port: WebPortOpt = None,
    prefix: PrefixOpt = None,
    mqtt_port: MqttPortOpt = None,
) -> None:
    """Run the runtime with the operator console on this terminal (`anima serve --console`)."""
    run(
        config,
        record=None,
        seconds=None,
        driver=driver,
        port=port,
        console=True,
        broker=broker,
        mqtt=not no_mqtt,
        web=not no_web,
        audio_out=audio_out,
        web_port=web_port,
        prefix=prefix,
        mqtt_port=mqtt_port,
    )


def configure(
    config: Path | None,
    record: Path | None,
    driver: str | None,
    port: str | None,
    broker: str | None,
    mqtt: bool,
    audio_out: str | None = None,
    humanoid: str | None = None,
    *,
    web: bool = True,
    agent: bool = False,
    body: str | None = None,
    web_port: int | None = None,
    prefix: str | None = None,
    mqtt_port: int | None = None,
    video_in: str | None = None,
    video_fps: float | None = None,
) -> AnimaConfig:
    """The config `anima serve` runs with these flags (and `anima doctor` checks): defaults,
    the file, the environment, then the flags, each checked as the file's values are."""
    from anima.config import load_config

    # a flag that picks a section's type picks it before the file's settings are checked:
    # those that type takes stay (ANIMA_HUMANOID__SIM_PORT), another type's go, said so
    cfg = load_config(config, types={"driver": driver, "humanoid": humanoid})
    cfg = _override(cfg, "body", checker_ini=body)
    cfg = _override(cfg, "agent", enabled=True if agent else None)
    cfg = _override(cfg, "web", enabled=None if web else False, port=web_port)
    cfg = _override(cfg, "humanoid", type=humanoid)
    cfg = _override(cfg, "speech", audio_out=audio_out)
    cfg = _override(cfg, "mqtt", broker=broker, enabled=None if mqtt else False, prefix=prefix)
    cfg = _mqtt_port(cfg, mqtt_port, broker_given=broker is not None)
    cfg = _video(cfg, video_in, video_fps)
    return _override(
        cfg, "driver", record=None if record is None else str(record), type=driver, port=port
    )


def _mqtt_port(cfg: AnimaConfig, port: int | None, *, broker_given: bool) -> AnimaConfig:
    """``--mqtt-port``: the port of the broker ``mqtt.broker`` picks — ``auto``: the one
    answering on this machine's port (``localhost:PORT``, the only candidate), else one anima
    starts there; ``embedded``: the one anima starts; ``HOST:PORT`` in the config: that host's
    broker on this port. With ``--broker HOST:PORT`` the port is in it: both are refused."""
    from anima.errors import ConfigError

    if port is None:
        return cfg
    if not 0 < port < 65536:
        raise ConfigError(f"command line: --mqtt-port must be in [1, 65535], got {port}")
    mode = cfg.mqtt.broker
    if mode == "auto":
        return _override(cfg, "mqtt", candidates=[f"localhost:{port}"], embedded_port=port)
    if mode == "embedded":
        return _override(cfg, "mqtt", embedded_port=port)
    if broker_given:
        raise ConfigError(
            f"command line: --mqtt-port {port} with --broker {mode}: the port is in --broker "
            "(give one of them)"
        )
    host = mode.rpartition(":")[0]
    return _override(cfg, "mqtt", broker=f"{host}:{port}")


def _video(cfg: AnimaConfig, video_in: str | None, fps: float | None) -> AnimaConfig:
    """``--video-in PATH``: the camera is that file or folder (``vision.source: video``);
    ``--video-fps N``: its pace, for a video source only."""
    from anima.errors import ConfigError

    cfg = _override(
        cfg, "vision", source="video" if video_in else None, video_in=video_in, video_fps=fps
    )
    if fps is not None and cfg.vision.source != "video":
        raise ConfigError(
            f"command line: --video-fps {fps:g} needs a video (--video-in PATH)",
            key="vision.video_fps",
        )
    return cfg


def _override(cfg: AnimaConfig, section: str, **changes: object) -> AnimaConfig:
    """``cfg`` with the command-line options given (not None) made to that section, checked
    as the config file's values are."""
    from anima.config import with_changes

    return with_changes(cfg, section, changes)


def run(
    config: Path | None,
    *,
    record: Path | None,
    seconds: float | None,
    driver: str | None,
    port: str | None,
    console: bool,
    broker: str | None = None,
    mqtt: bool = True,
    web: bool = True,
    audio_out: str | None = None,
    humanoid: str | None = None,
    agent: bool = False,
    audio_in: str | None = None,
    body: str | None = None,
    web_port: int | None = None,
    prefix: str | None = None,
    mqtt_port: int | None = None,
    video_in: str | None = None,
    video_fps: float | None = None,
) -> None:
    from anima.build import build
    from anima.frontdoors.web import WebFrontDoor

    try:
        cfg = configure(
            config,
            record,
            driver,
            port,
            broker,
            mqtt,
            audio_out,
            humanoid,
            web=web,
            agent=agent,
            body=body,
            web_port=web_port,
            prefix=prefix,
            mqtt_port=mqtt_port,
            video_in=video_in,
            video_fps=video_fps,
        )
        logging.basicConfig(
            level=cfg.log_level.upper(),
            format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
        )
        if cfg.log_level.upper() != "DEBUG":
            # the embedded broker narrates every state change at INFO
            for noisy in ("amqtt", "transitions"):
                logging.getLogger(noisy).setLevel(logging.WARNING)
        raise_open_files_limit()  # 1,024 must not be the ceiling slow clients hit
        runtime = build(cfg, audio_in=audio_in, report=typer.echo)
        web_door = next((d for d in runtime.frontdoors if isinstance(d, WebFrontDoor)), None)
        reloads, signals = _install_signals(runtime)
        try:
            runtime.start(on_moving=lambda: typer.echo(moving_line(runtime, cfg.driver.type)))
        except BaseException:
            reloads.stop()
            signals.close()
            raise
    except AnimaError as exc:
        raise fail(exc) from exc
    pid = claim_pid_file(cfg.mqtt.prefix, runtime)
    try:
        if runtime.wait_first_tick():
            typer.echo(f"anima ready: {len(runtime.body)} channels on the {cfg.driver.type} robot")
        if web_door is not None:
            typer.echo(f"anima dashboard: {web_door.url}")
        if console:
            _start_console(runtime, signals)
        wait_with_status(runtime, signals, seconds, cfg.serve.status_interval_s)
    finally:
        reloads.stop()
        runtime.stop()  # a signal meanwhile waits in the pipe: a second Ctrl-C cannot cut it
        signals.close()
        if pid is not None:
            instances.release(pid)
        log.info("stopped")


def moving_line(runtime: Runtime, driver: str) -> str:
    """The line ``anima serve`` prints at the first tick, before the rest loads."""
    age = process_age_s()
    since = f", {age:.2f} s after the process started" if age is not None else ""
    return f"anima moving: first tick on the {driver} robot{since} (loading the rest)"


def _install_signals(runtime: Runtime) -> tuple[Reloads, Signals]:
    from anima.cli.process import Reloads, Signals

    # reload off the main thread (parsing files there would delay the stop), one at a time: a
    # storm of SIGHUPs is one reload running and one pending. The handlers do nothing: the main
    # loop reads the signals (Signals says why).
    reloads = Reloads(runtime.reload_animations).start()
    return reloads, Signals(reloads.request).install()


def _start_console(runtime: Runtime, signals: Signals) -> None:
    from anima.frontdoors.console import Console

    con = Console(
        runtime.behaviour,
        sys.stdin,
        sys.stdout,
        reload=runtime.reload_animations,
        execute=runtime.execute,
    )

    def run_console() -> None:
        con.run()
        signals.stop()  # `q` or end of input ends the session

    # A daemon: a blocking read of the terminal cannot be interrupted; the process exit ends it.
    threading.Thread(target=run_console, name="anima-console", daemon=True).start()
