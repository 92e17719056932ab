"""``anima mcp``: the robot as an MCP server on stdio, for desktop clients; ``anima mcp
install`` registers it with one; ``anima mcp tools`` shows what a model would see."""

from __future__ import annotations

import json
import logging
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer

from anima.cli.common import ConfigOpt, fail
from anima.errors import AnimaError, MissingDependencyError

if TYPE_CHECKING:
    from anima.config import AnimaConfig

app = typer.Typer(
    help="AI agents drive the robot over the Model Context Protocol (docs/mcp.md).",
    invoke_without_command=True,
)

UrlOpt = Annotated[
    str | None,
    typer.Option(
        "--url", help="Bridge to a running anima serve (http://host:8080) instead of a runtime."
    ),
]
TokenOpt = Annotated[
    str | None,
    typer.Option("--token", envvar="ANIMA_WEB__TOKEN", help="The bridged server's web.token."),
]


@app.callback(invoke_without_command=True)
def mcp_command(
    ctx: typer.Context, config: ConfigOpt = None, url: UrlOpt = None, token: TokenOpt = None
) -> None:
    """Serve MCP on stdin/stdout: a runtime on the configured robot (the simulated one by
    default, no other doors), or, with --url, a bridge to a running `anima serve`'s /mcp."""
    if ctx.invoked_subcommand is not None:
        return
    try:
        import anyio
    except ImportError as exc:
        raise fail(MissingDependencyError("mcp", "mcp")) from exc
    logging.basicConfig(
        stream=sys.stderr,  # stdout is the MCP wire
        level=logging.INFO,
        format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
    )
    signal.signal(signal.SIGTERM, _interrupt)
    if url is not None:
        from anima.frontdoors.mcp.bridge import run_bridge

        try:
            anyio.run(run_bridge, url.rstrip("/") + "/mcp", token)
        except KeyboardInterrupt:
            pass
        except AnimaError as exc:
            raise fail(exc) from exc
        return
    _serve_stdio(config)


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _serve_stdio(config: Path | None) -> None:
    import anyio

    from anima.agent.remembering import shared_memory
    from anima.agent.vocabulary import robot_registry
    from anima.build import build
    from anima.frontdoors.mcp.robot import McpRobot
    from anima.frontdoors.mcp.server import McpServer

    try:
        cfg = _config(config)
        logging.getLogger().setLevel(cfg.log_level.upper())
        runtime = build(cfg, doors=False, report=lambda line: print(line, file=sys.stderr))
        # the registry before the runtime starts: a user's broken actions stop nothing
        registry = robot_registry(runtime, user_actions=cfg.agent.user_actions)
        memory = shared_memory(runtime.agent, cfg.agent.memory, registry)
        runtime.start()
    except AnimaError as exc:
        raise fail(exc) from exc
    robot = McpRobot(runtime, registry, cfg.mcp, memory=memory)
    server = McpServer(robot)
    robot.start()
    try:
        anyio.run(server.run_stdio)
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
        robot.stop()
        runtime.stop()


def _config(path: Path | None) -> AnimaConfig:
    from anima.config import load_config

    return load_config(path)


@app.command("tools")
def tools_command(
    config: ConfigOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print tools/list's tools.")] = False,
) -> None:
    """The tools a client sees (for this config), and their size in a model's context."""
    from anima.cli.agent import configured_registry
    from anima.frontdoors.mcp.tools import build_tools, tools_size

    try:
        cfg = _config(config)
        registry = configured_registry(cfg, None)  # as the runtime would have it
    except AnimaError as exc:
        raise fail(exc) from exc
    tools = build_tools(registry, cfg.mcp)
    if as_json:
        listed = [
            {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
            for t in tools
        ]
        typer.echo(json.dumps(listed, indent=2))
        return
    for t in tools:
        typer.echo(f"{t.name:<22} {t.size():>5} chars  {t.description}")
    size = tools_size(tools)
    typer.echo(f"{len(tools)} tools, {size} characters of JSON (~{size // 4} tokens)")


@app.command("install")
def install_command(
    client: Annotated[str, typer.Option("--client", help="claude or cursor.")] = "claude",
    config: ConfigOpt = None,
    url: UrlOpt = None,
    path: Annotated[
        Path | None, typer.Option("--path", help="The client's config file (default: its own).")
    ] = None,
    print_only: Annotated[
        bool, typer.Option("--print", help="Print the JSON snippet; change no file.")
    ] = False,
) -> None:
    """Register `anima mcp` with a desktop client (its other servers are kept)."""
    from anima.frontdoors.mcp.install import SERVER, config_path, install, server_entry

    args: list[str] = []
    if config is not None:
        args += ["--config", str(config.resolve())]
    if url is not None:
        args += ["--url", url]
    entry = server_entry(args)
    if print_only:
        typer.echo(json.dumps({"mcpServers": {SERVER: entry}}, indent=2))
        return
    try:
        target = path or config_path(client)
        changed = install(target, entry)
    except AnimaError as exc:
        raise fail(exc) from exc
    typer.echo(
        f"{'registered' if changed else 'already registered'}: {SERVER} in {target}; "
        "restart the client to load it"
    )
