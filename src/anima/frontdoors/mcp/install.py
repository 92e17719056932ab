"""``anima mcp install``: register anima's MCP server with a desktop client.

The clients read one JSON file with an ``mcpServers`` object (Claude Desktop's
``claude_desktop_config.json``, Cursor's ``mcp.json``); anima's entry runs this interpreter's
``anima mcp`` over stdio. The file's other servers and keys are kept; it is written whole to a
temporary file and renamed, so a client never reads half a file.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from anima.errors import AnimaError
from anima.wire.jsontypes import JsonDict, JsonObject

SERVER = "anima"  # the entry's name in mcpServers
CLIENTS = ("claude", "cursor")


def config_path(client: str, home: Path | None = None) -> Path:
    """Where ``client`` reads its servers on this system."""
    home = home or Path.home()
    if client == "cursor":
        return home / ".cursor" / "mcp.json"
    if client != "claude":
        raise AnimaError(f"unknown client {client!r} (clients: {', '.join(CLIENTS)})")
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA", home / "AppData" / "Roaming"))
        return base / "Claude" / "claude_desktop_config.json"
    return home / ".config" / "Claude" / "claude_desktop_config.json"


def server_entry(args: list[str] | None = None) -> JsonObject:
    """The ``mcpServers`` entry: this Python running ``anima mcp`` (with ``args``)."""
    return {"command": sys.executable, "args": ["-m", "anima", "mcp", *(args or [])]}


def install(path: Path, entry: JsonObject) -> bool:
    """Add or replace anima's entry in ``path`` (made when missing); True when it changed."""
    data: JsonDict = {}
    if path.exists():
        try:
            loaded = json.loads(path.read_text(encoding="utf-8") or "{}")
        except (OSError, ValueError) as exc:
            raise AnimaError(f"{path}: cannot read it as JSON ({exc}); fix or move it") from None
        if not isinstance(loaded, dict):
            raise AnimaError(f"{path}: the top level must be an object")
        data = loaded
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise AnimaError(f"{path}: mcpServers must be an object")
    if servers.get(SERVER) == entry:
        return False
    data["mcpServers"] = {**servers, SERVER: entry}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True
