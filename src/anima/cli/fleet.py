"""``anima fleet``: every robot on a broker, and commands to one or all (docs/fleet.md)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from anima.cli.common import fail
from anima.errors import AnimaError, MissingDependencyError
from anima.wire.mqtt import BrokerAddress, Credentials
from anima.wire.printable import printable

app = typer.Typer(
    help="Many robots on one broker: list them, send to one or all (docs/fleet.md).",
    invoke_without_command=True,
)

BrokerOpt = Annotated[
    str | None,
    typer.Option(
        "--broker",
        envvar="ANIMA_MQTT__BROKER",
        help="The broker, HOST:PORT (default: the one a running anima serve of yours uses, "
        "else 127.0.0.1:1883).",
        show_default=False,
    ),
]
DEFAULT_BROKER = "127.0.0.1:1883"
UserOpt = Annotated[str | None, typer.Option(envvar="ANIMA_MQTT__USERNAME", help="User name.")]
PasswordOpt = Annotated[
    str | None, typer.Option(envvar="ANIMA_MQTT__PASSWORD", help="Password.", show_default=False)
]
CaOpt = Annotated[
    str | None, typer.Option("--tls-ca", envvar="ANIMA_MQTT__TLS_CA", help="TLS: the CA file.")
]
COLUMNS = ("name", "prefix", "status", "loop", "speaking", "estop", "body", "driver", "health")


def _broker(given: str | None) -> tuple[str, str]:
    """The broker to look at, and where it came from (said to the user): ``--broker`` (or
    ANIMA_MQTT__BROKER), else the broker a running ``anima serve`` of this user recorded (its
    own may listen on another port than 1883, taken), else 127.0.0.1:1883."""
    if given is not None and given not in ("auto", "embedded"):
        return given, "--broker"
    from anima import instances

    live, _stale = instances.running()
    found = sorted({(i.broker, i.prefix, i.pid) for i in live if i.broker}, key=str)
    brokers = {b for b, _p, _pid in found}
    if len(brokers) == 1:
        _b, prefix, pid = found[0]
        return found[0][0], f"the broker of anima serve {prefix!r} (pid {pid})"
    if len(brokers) > 1:
        named = ", ".join(f"{b} ({p!r})" for b, p, _pid in found)
        return DEFAULT_BROKER, f"the default: running instances use several ({named}); --broker"
    return DEFAULT_BROKER, "the default: no running anima serve of yours recorded one"


def _credentials(username: str | None, password: str | None, tls_ca: str | None) -> Credentials:
    return Credentials(username=username, password=password, tls=tls_ca is not None, tls_ca=tls_ca)


@app.callback(invoke_without_command=True)
def fleet_list(
    ctx: typer.Context,
    broker: BrokerOpt = None,
    username: UserOpt = None,
    password: PasswordOpt = None,
    tls_ca: CaOpt = None,
    wait: Annotated[float, typer.Option(min=0.1, max=10, help="Seconds to listen.")] = 1.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List every robot on the broker: online or offline (its last will), its loop, speaking,
    estop, body, driver and health."""
    if ctx.invoked_subcommand is not None:
        return
    from anima.fleet import survey

    broker, source = _broker(broker)
    try:
        creds = _credentials(username, password, tls_ca)
        robots = survey(BrokerAddress.parse(broker), creds, wait_s=wait)
    except AnimaError as exc:
        raise fail(AnimaError(f"{exc} (broker: {source})")) from None
    if as_json:
        typer.echo(json.dumps([r.to_json() for r in robots], indent=2))
        return
    if not robots:
        typer.echo(f"no robot on {broker} ({source})")
        return
    rows = [r.row() for r in robots]
    widths = {c: max(len(c), *(len(row[c]) for row in rows)) for c in COLUMNS}
    typer.echo("  ".join(c.upper().ljust(widths[c]) for c in COLUMNS).rstrip())
    for row in rows:
        typer.echo("  ".join(row[c].ljust(widths[c]) for c in COLUMNS).rstrip())
    typer.echo(f"broker {broker} ({source})")


@app.command("send")
def fleet_send(
    command: Annotated[str, typer.Argument(help="The control leaf: animation, speak, estop, …")],
    payload: Annotated[str, typer.Argument(help="Its payload, as over MQTT (docs/mqtt.md).")] = "",
    robot: Annotated[
        list[str] | None, typer.Option("--robot", "-r", help="A robot's name or prefix.")
    ] = None,
    to_all: Annotated[bool, typer.Option("--all", help="Every robot online.")] = False,
    broker: BrokerOpt = None,
    username: UserOpt = None,
    password: PasswordOpt = None,
    tls_ca: CaOpt = None,
    wait: Annotated[
        float,
        typer.Option(min=0, max=30, help="Seconds to wait for a refusal on the error topic."),
    ] = 1.0,
    wait_online: Annotated[
        float,
        typer.Option(min=0, max=600, help="Seconds to hold the command for a robot not online."),
    ] = 10.0,
) -> None:
    """Send a command to one robot (--robot, by name or prefix, repeatable) or to all online.

    Each robot must say online first (held up to --wait-online); a refusal on its error topic
    within --wait seconds is printed and the exit code is 1."""
    from anima.fleet import FleetError, deliver, survey

    if to_all == bool(robot):
        raise fail(FleetError("name the robots (--robot NAME, repeatable) or give --all"))
    broker, source = _broker(broker)
    try:
        creds = _credentials(username, password, tls_ca)
        address = BrokerAddress.parse(broker)
        robots = survey(address, creds, wait_s=0.5)
        if to_all:
            chosen = [r.prefix for r in robots if r.online]
        else:
            known = {key: r for r in robots for key in (r.name, r.prefix)}
            unknown = [n for n in robot or [] if n not in known]
            if unknown:
                names = ", ".join(sorted(printable(r.name, 60) for r in robots)) or "none"
                asked = ", ".join(printable(n, 60) for n in unknown)
                raise FleetError(f"no robot {asked} on {broker} (robots: {names})")
            chosen = [known[n].prefix for n in robot or []]
        if not chosen:
            raise FleetError(f"no robot online on {broker} ({source})")
        done = deliver(address, chosen, command, payload, creds, online_s=wait_online,
                       refusal_s=wait)  # fmt: skip
    except AnimaError as exc:
        raise fail(exc) from None
    for d in done:
        if d.refused is None:
            typer.echo(f"sent {printable(command, 60)} to {printable(d.topic)}")
        else:
            what = "refused by" if d.sent else "not sent to"
            typer.secho(f"{what} {printable(d.prefix)}: {printable(d.refused, 300)}",
                        fg=typer.colors.RED, err=True)  # fmt: skip
    if any(d.refused is not None for d in done):
        raise typer.Exit(code=1)


@app.command("serve")
def fleet_serve(
    broker: BrokerOpt = None,
    username: UserOpt = None,
    password: PasswordOpt = None,
    tls_ca: CaOpt = None,
    host: Annotated[str, typer.Option(help="Where the page listens.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Its port (0: a free one).")] = 8090,
    token: Annotated[
        str | None, typer.Option(envvar="ANIMA_FLEET_TOKEN", help="Required off loopback.")
    ] = None,
) -> None:
    """The fleet side by side in a browser, with an emergency stop for one robot or all."""
    from anima.fleet import FleetWatcher
    from anima.fleet.web import check_exposure, make_app

    broker, _source = _broker(broker)
    try:
        check_exposure(host, token)
        import uvicorn

        watcher = FleetWatcher(
            BrokerAddress.parse(broker), _credentials(username, password, tls_ca)
        )
        watcher.start()
    except ImportError as exc:
        raise fail(MissingDependencyError("uvicorn", "web")) from exc
    except AnimaError as exc:
        raise fail(exc) from None
    try:
        config = uvicorn.Config(make_app(watcher, token=token), host=host, port=port,
                                log_level="warning")  # fmt: skip
        server = uvicorn.Server(config)
        typer.echo(f"anima fleet: http://{host}:{port}/ (broker {broker})")
        server.run()
    finally:
        watcher.stop()


@app.command("find")
def fleet_find(
    seconds: Annotated[float, typer.Option(min=0.5, max=30, help="Seconds to listen.")] = 2.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The anima dashboards announced on the LAN over mDNS (web.mdns: true); for finding a
    robot's page only: commands go through its broker."""
    import dataclasses

    from anima.frontdoors.web.mdns import find_dashboards

    try:
        found = find_dashboards(seconds)
    except AnimaError as exc:
        raise fail(exc) from None
    if as_json:
        typer.echo(json.dumps([dataclasses.asdict(d) for d in found], indent=2))
    elif not found:
        typer.echo("no anima dashboard announced on this network (web.mdns is off by default)")
    for d in found if not as_json else []:
        shown = [printable(v, 120) for v in (d.name, d.url, d.prefix, d.body, d.version)]
        typer.echo("{}: {} (prefix {}, body {}, anima {})".format(*shown))  # anyone's TXT records
