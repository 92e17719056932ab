#!/bin/bash
# Builds benchmarks/anchor/.venv-anchor: the anchor's own environment, apart from anima's .venv
# (the SDK's pins cannot sit beside anima's). It installs requirements.txt: Pollen's reachy-mini
# SDK 1.2.11 with its daemon (FastAPI, Zenoh, the Rust kinematics, OpenCV, scipy…) and the
# dances library 0.2.1, ~650 MB, about 30 s from the local package index. No apt packages.
# Idempotent: a stamp holds the hash of requirements.txt. Usage: benchmarks/anchor/setup.sh
set -euo pipefail
cd "$(dirname "$0")"
TARGET=.venv-anchor
want=$(sha256sum requirements.txt | cut -c1-16)
if [ -f "$TARGET/.anchor-stamp" ] && [ "$(cat "$TARGET/.anchor-stamp")" = "$want" ]; then
  echo "anchor: $TARGET is up to date"
  exit 0
fi
python=${PYTHON:-python3}
echo "anchor: building $TARGET with $($python --version) (reachy-mini 1.2.11, dances library 0.2.1, ~650 MB, ~30 s)"
rm -rf "$TARGET"
"$python" -m venv "$TARGET"
if ! "$TARGET/bin/pip" install -q --disable-pip-version-check -r requirements.txt \
    </dev/null >"$TARGET/pip.log" 2>&1; then
  grep -v "^WARNING: Location" "$TARGET/pip.log" | tail -20 >&2
  echo "anchor: pip install failed (whole log: $TARGET/pip.log)" >&2
  exit 1
fi
# the imports the harness needs, now rather than in the middle of a run
"$TARGET/bin/python" -c "import reachy_mini.daemon.app.main, reachy_mini_dances_library.dance_move"
echo "$want" > "$TARGET/.anchor-stamp"
echo "anchor: $TARGET ready"
