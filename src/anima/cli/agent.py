"""`anima actions …`: the agent's vocabulary — every action with its signature and phrases."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from anima.cli.common import ConfigOpt, fail
from anima.errors import AnimaError, CommandRefusedError

if TYPE_CHECKING:
    from anima.agent.actions import ActionRegistry
    from anima.agent.remote import RemoteEars
    from anima.config import AnimaConfig, ListenConfig
    from anima.humanoid.spec import RobotState
    from anima.listening import Listener, ListenResult
    from anima.listening.sources import AudioSource

app = typer.Typer(
    help="The agent's actions: what planners may ask the robot to do.", no_args_is_help=True
)


class _NotConnected:
    """Stands in for the humanoid when actions are only listed: never called."""

    def _refuse(self) -> str:
        raise CommandRefusedError("listing only: no humanoid is connected")

    def state(self) -> RobotState:
        raise CommandRefusedError("listing only: no humanoid is connected")

    def wait_for_mode(self, mode: str, timeout_s: float = 15.0) -> RobotState:
        return self.state()

    def speed(self, x: float, y: float, yaw: float, *, continuous: bool = False) -> str:
        return self._refuse()

    def stand_motion(self, motion: str) -> str:
        return self._refuse()

    def posture(self, pitch: float, roll: float, yaw: float, height: float) -> str:
        return self._refuse()

    def set_mode(self, mode: str) -> str:
        return self._refuse()


def configured_registry(config: Path | AnimaConfig | None, humanoid: bool | None) -> ActionRegistry:
    """The registry the configured agent would use (the humanoid's when one is configured);
    ``config`` a file, or a config already loaded."""
    from anima.agent.vocabulary import vocabulary_registry
    from anima.animation.library import AnimationLibrary, configured_folders
    from anima.behaviour.vocabulary import Vocabulary
    from anima.body import load_body
    from anima.config import AnimaConfig, load_config

    cfg = config if isinstance(config, AnimaConfig) else load_config(config)
    # no runtime: only the body's size and the animation library
    body = load_body(cfg.body.checker_ini)
    library = AnimationLibrary(configured_folders(cfg.animation, body.animations), len(body))
    library.load()
    with_humanoid = cfg.humanoid.type != "none" if humanoid is None else humanoid
    return vocabulary_registry(
        Vocabulary.of(library, cfg.behaviour, humanoid=with_humanoid),
        user_actions=cfg.agent.user_actions,
        humanoid=_NotConnected() if with_humanoid else None,
    )


HumanoidOpt = Annotated[
    bool | None,
    typer.Option(
        "--humanoid/--no-humanoid",
        help="Include the humanoid actions (default: when humanoid.type is configured).",
    ),
]


@app.command("list")
def list_actions(
    config: ConfigOpt = None,
    humanoid: HumanoidOpt = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the OpenAI-compatible tools instead.")
    ] = False,
) -> None:
    """List every action: signature, phrases and description."""
    try:
        registry = configured_registry(config, humanoid)
    except AnimaError as exc:
        raise fail(exc) from exc
    if as_json:
        typer.echo(json.dumps(registry.tools(), indent=2))
        return
    for act in registry:
        typer.secho(act.usage(), bold=True)
        typer.echo(textwrap.indent(act.doc, "    "))
        if act.phrases:
            phrases = ", ".join(f'"{p.text}"' for p in act.phrases)
            typer.echo(
                textwrap.fill(
                    phrases, 96, initial_indent="    phrases: ", subsequent_indent="      "
                )
            )
        typer.echo("")


@app.command("show")
def show(
    name: Annotated[str, typer.Argument(help="An action's name.")],
    config: ConfigOpt = None,
    humanoid: HumanoidOpt = None,
) -> None:
    """Show one action: signature, description, phrases and its JSON schema for LLM tools."""
    try:
        registry = configured_registry(config, humanoid)
    except AnimaError as exc:
        raise fail(exc) from exc
    act = registry.get(name)
    if act is None:
        typer.secho(
            f"error: no action {name!r} (known: {', '.join(registry.names())})",
            fg=typer.colors.RED,
            err=True,
        )
        raise typer.Exit(code=2)
    typer.secho(act.usage(), bold=True)
    typer.echo(textwrap.indent(act.doc, "    "))
    for phrase in act.phrases:
        args = ", ".join(f"{k}={v!r}" for k, v in phrase.args.items())
        typer.echo(f'    "{phrase.text}"' + (f" → {args}" if args else ""))
    typer.echo(json.dumps(act.tool(), indent=2))


def agent_command(
    config: ConfigOpt = None,
    broker: Annotated[str, typer.Option(help="The runtime's MQTT broker, HOST:PORT.")] = (
        "127.0.0.1:1883"
    ),
    prefix: Annotated[str | None, typer.Option(help="The robot's topic prefix.")] = None,
    audio_in: Annotated[
        str, typer.Option("--audio-in", help="mic, stdin, or a .wav file.")
    ] = "mic",
    wake_now: Annotated[
        bool, typer.Option("--wake", help="Start listening at once (no wake phrase needed).")
    ] = False,
) -> None:
    """Listen here and let a running `anima serve --agent` plan and act (over MQTT)."""
    import logging
    import signal
    import threading

    from anima.agent.remote import RemoteEars
    from anima.agent.understanding import About, Understander, asr_phrases
    from anima.agent.understanding.readings import choose_reading
    from anima.config import load_config
    from anima.events import Transcript
    from anima.listening.asr import Rereads
    from anima.listening.makers import make_source
    from anima.wire.mqtt import BrokerAddress, Credentials
    from anima.wire.printable import printable

    try:
        cfg = load_config(config)
        logging.basicConfig(  # what was heard ("heard: …") and what was not, as serve shows it
            level=cfg.log_level.upper(),
            format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
        )
        source = make_source(audio_in)
        if source is None:
            raise CommandRefusedError("anima agent needs audio: --audio-in mic, stdin or a .wav")

        registry = configured_registry(cfg, None)  # as the runtime's agent has it
        understander = Understander(
            registry, about=About(name=cfg.agent.name, wake_phrase=cfg.listen.wake_phrase)
        )

        def choose(heard: Transcript) -> str:
            recognizer = ears.listener.recognizer
            reread = recognizer.reread if isinstance(recognizer, Rereads) else None
            chosen, _ = choose_reading(
                heard.text.strip(), heard.alternatives, understander.understand,
                reread=reread, phrases=asr_phrases(registry),
            )  # fmt: skip
            return chosen

        ears = RemoteEars(
            # what it reports comes from the broker (anyone's payloads): escaped, one line each
            lambda ears: _ears_listener(ears, cfg.listen, source, registry),
            BrokerAddress.parse(broker), prefix or cfg.mqtt.prefix,
            report=lambda line: typer.echo(printable(line, 1000)),
            choose=choose, credentials=Credentials.of(cfg.mqtt),  # the config's login and TLS
        )  # fmt: skip
        if wake_now:
            ears.listener.wake("keyboard")
        ears.start()
    except (AnimaError, ConnectionError) as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        raise typer.Exit(code=2) from exc
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    typer.echo(f"anima agent: listening to {source.name}, talking to {broker}")
    try:
        stop.wait()
    finally:
        ears.stop()


def _ears_listener(
    ears: RemoteEars, listen: ListenConfig, source: AudioSource, registry: ActionRegistry
) -> Listener:
    """The listener of ``anima agent``: what it hears goes to ``ears`` (a partial is shown)."""
    from anima.agent.assembly import recognizer_phrases
    from anima.events import Transcript
    from anima.listening import make_listener
    from anima.wire.printable import printable

    def take(result: ListenResult) -> None:
        if isinstance(result, Transcript) and not result.final:
            typer.echo(f"… {printable(result.text, 400)}")
        else:
            ears.take(result)

    listener = make_listener(
        listen, source, phrases=lambda asr: recognizer_phrases(registry, asr),
        echo=False,  # the robot's speaker is not here: nothing to cancel
        results=take,
    )  # fmt: skip
    assert listener is not None  # a source object always makes one
    return listener
