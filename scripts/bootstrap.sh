#!/usr/bin/env bash
# Idempotent set-up for `make run` and `make test`: Debian packages (when root), a .venv in the
# repo, and the project installed editable with every extra. Re-runs only what is out of date.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv
STAMP=$VENV/.anima-installed
APT_LIST=scripts/apt-packages.txt

# --- Debian packages -------------------------------------------------------------------------
missing=()
if [ -f "$APT_LIST" ] && command -v dpkg-query >/dev/null 2>&1; then
  while read -r pkg _; do
    case "$pkg" in ""|\#*) continue ;; esac
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done < "$APT_LIST"
fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "bootstrap: installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq </dev/null
    apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
  else
    echo "bootstrap: missing Debian packages: ${missing[*]}" >&2
    echo "bootstrap: install them with: sudo apt-get install ${missing[*]}" >&2
    echo "bootstrap: continuing; features that need them will say so." >&2
  fi
fi

# --- Python ----------------------------------------------------------------------------------
PYTHON=${PYTHON:-}
if [ -z "$PYTHON" ]; then
  for cand in python3 python3.11 python3.12 python3.13; do
    if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      PYTHON=$cand; break
    fi
  done
fi
if [ -z "$PYTHON" ]; then
  echo "bootstrap: anima needs Python >= 3.11 (none found on PATH)" >&2
  exit 1
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "bootstrap: creating $VENV with $PYTHON"
  if ! "$PYTHON" -m venv "$VENV"; then
    rm -rf "$VENV"
    # Debian's own Python ships venv/ensurepip separately
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "bootstrap: installing python3-venv"
      DEBIAN_FRONTEND=noninteractive apt-get update -qq </dev/null
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv </dev/null
      "$PYTHON" -m venv "$VENV"
    else
      echo "bootstrap: 'python -m venv' failed; install python3-venv (sudo apt-get install python3-venv)" >&2
      exit 1
    fi
  fi
fi

if [ ! -f "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ]; then
  echo "bootstrap: installing anima[all,dev] into $VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip </dev/null
  "$VENV/bin/python" -m pip install -q -e ".[all,dev]" </dev/null
  touch "$STAMP"
fi
