#!/bin/bash
# Builds .venv-reachy: Pollen's own Reachy Mini daemon (reachy-mini, pinned in requirements.txt)
# for its mockup simulation, which anima's driver tests and `anima bench reachy` start on a free
# loopback port. It lives apart from anima's .venv: the SDK's pins cannot sit beside anima's
# (docs/reachy-mini.md). No apt packages: reachy_mini imports PyGObject, onnxruntime and a few
# more at import time that its mockup never uses, and anima_daemon_stubs.py (loaded by its .pth)
# stands in for them, raising if one is ever called; it also keeps the daemon's mDNS on loopback.
# With uv (anima's dev extra) a cold build takes about 10 s. Idempotent: a stamp holds the hash
# of these files. Usage: scripts/reachy-daemon/setup.sh [VENV]   (default .venv-reachy)
set -euo pipefail
cd "$(dirname "$0")/../.."
DIR=scripts/reachy-daemon
TARGET=${1:-.venv-reachy}
UV=${UV:-.venv/bin/uv}
FILES=("$DIR/requirements.txt" "$DIR/anima_daemon_stubs.py" "$DIR/anima_daemon_stubs.pth")
want=$(cat "${FILES[@]}" | sha256sum | cut -c1-16)
if [ -f "$TARGET/.anima-stamp" ] && [ "$(cat "$TARGET/.anima-stamp")" = "$want" ]; then
  exit 0
fi
if [ ! -x "$UV" ]; then
  echo "reachy-daemon: $UV is missing (anima's dev extra installs it: make bootstrap)" >&2
  exit 1
fi
echo "reachy-daemon: building $TARGET (Pollen's Reachy Mini daemon for its mockup simulation, ~10 s)"
rm -rf "$TARGET"
python=$(.venv/bin/python -c 'import sys; print(sys._base_executable)')
"$UV" venv -q --python "$python" "$TARGET"
"$UV" pip install -q --python "$TARGET/bin/python" --no-deps --only-binary :all: \
  --compile-bytecode -r "$DIR/requirements.txt" </dev/null
site=$("$TARGET/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cp "$DIR/anima_daemon_stubs.py" "$DIR/anima_daemon_stubs.pth" "$site/"
# the daemon's whole import path, now rather than in a test
"$TARGET/bin/python" -c "import reachy_mini.daemon.app.main" >/dev/null
echo "$want" > "$TARGET/.anima-stamp"
echo "reachy-daemon: $TARGET ready ($("$TARGET/bin/python" -c 'import importlib.metadata as m; print("reachy-mini", m.version("reachy-mini"))'))"
