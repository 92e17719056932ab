"""`anima humanoid serve` (a simulated Adam on gRPC) and `anima adam` (an interactive client)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from anima.cli.common import fail
from anima.errors import AnimaError

app = typer.Typer(
    help="The Adam humanoid over gRPC (adam_control.RobotControl): serve a simulated one.",
    no_args_is_help=True,
)


@app.command("serve")
def serve(
    bind: Annotated[
        str, typer.Option(help="Address to listen on; 0.0.0.0 exposes it to the network.")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="TCP port (the robot's is 6666; 0 picks one).")
    ] = 6666,
) -> None:
    """Serve a simulated Adam humanoid until Ctrl-C, SIGTERM or a CloseProgram call."""
    # gRPC's C core would print its own log line for a failed bind; we explain it in one.
    # Set GRPC_VERBOSITY to see the core's logs again.
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")
    try:
        from anima.humanoid.server import serve as start

        server = start(bind, port)
    except AnimaError as exc:
        raise fail(exc) from None
    except ImportError as exc:
        raise fail(
            AnimaError(f"{exc}: install the grpc extra: pip install 'anima[grpc]'")
        ) from None

    def on_term(signum: int, frame: FrameType | None) -> None:
        server.stop()

    previous = signal.signal(signal.SIGTERM, on_term)
    typer.echo(
        f"simulated Adam serving adam_control.RobotControl on {server.address} (Ctrl-C to stop)"
    )
    try:
        while not server.wait(0.5):
            pass
    except KeyboardInterrupt:
        server.stop()
    finally:
        signal.signal(signal.SIGTERM, previous)
    typer.echo("simulated Adam stopped")


def adam(
    ip: Annotated[
        str | None, typer.Option(help="The robot's address (default: ip_config.json, else local).")
    ] = None,
    port: Annotated[int | None, typer.Option(min=1, max=65535, help="The robot's port.")] = None,
    ip_config: Annotated[
        Path | None,
        typer.Option("--ip-config", help="An ip_config.json with ip and port (default: ./ one)."),
    ] = None,
    connect_timeout: Annotated[
        float, typer.Option(min=0.1, help="Seconds to wait for the robot to answer.")
    ] = 5.0,
) -> None:
    """Drive an Adam humanoid (real or simulated) one command per line; type help."""
    try:
        from anima.humanoid.client import AdamClient
        from anima.humanoid.shell import AdamShell

        client = AdamClient(ip, port, ip_config=ip_config, connect_timeout_s=connect_timeout)
        client.connect()
    except AnimaError as exc:
        raise fail(exc) from None
    except ImportError as exc:
        raise fail(
            AnimaError(f"{exc}: install the grpc extra: pip install 'anima[grpc]'")
        ) from None
    with client:
        interactive = sys.stdin.isatty()
        if interactive:
            typer.echo(f"connected to Adam at {client.target}; type help, quit to leave")
        try:
            AdamShell(client, sys.stdout).run(sys.stdin, prompt="adam> " if interactive else None)
        except KeyboardInterrupt:
            typer.echo("")
