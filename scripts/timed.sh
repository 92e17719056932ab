#!/usr/bin/env bash
# make test's stopwatch: runs one step (lint, mypy, a test tier) and notes its wall time, so the
# table at the end, or at the first step that fails, says where the minutes went.
#   scripts/timed.sh --reset            forget the last run's times
#   scripts/timed.sh STEP COMMAND...    run COMMAND; when it fails, print the table so far and
#                                       fail with its exit code (make stops there: failing fast)
#   scripts/timed.sh --table            print the table
set -uo pipefail
cd "$(dirname "$0")/.."
TIMES=${ANIMA_TEST_TIMES:-.venv/test-times.txt}

table() {
  echo
  echo "make test: wall time per step"
  awk '{ printf "  %-13s %7.1f s  %s\n", $1, $2, $3; total += $2 }
       END { printf "  %-13s %7.1f s  (%.1f min)\n", "total", total, total / 60 }' "$TIMES"
}

case "${1:-}" in
  --reset) mkdir -p "$(dirname "$TIMES")"; : >"$TIMES"; exit 0 ;;
  --table) table; exit 0 ;;
  "" | -*) echo "usage: scripts/timed.sh --reset | --table | STEP COMMAND..." >&2; exit 2 ;;
esac

step=$1
shift
start=$(date +%s.%N)
"$@"
rc=$?
end=$(date +%s.%N)
if [ "$rc" = 0 ]; then outcome=passed; else outcome="failed($rc)"; fi
echo "$step $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }') $outcome" >>"$TIMES"
if [ "$rc" != 0 ]; then
  table
  exit "$rc"
fi
