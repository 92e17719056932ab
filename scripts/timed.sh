#!/usr/bin/env bash
# make test's stopwatch: runs one step (lint, mypy, a test tier) and notes its wall and CPU time, so the
# table at the end, or at the first step that fails, says where the minutes went (and, beside
# them, the CPU time: a tier that waits more than it computes shows it).
#   scripts/timed.sh --reset            forget the last run's times
#   scripts/timed.sh STEP COMMAND...    run COMMAND; when it fails, print the table so far and
#                                       fail with its exit code (make stops there: failing fast)
#   scripts/timed.sh --table            print the table
set -uo pipefail
cd "$(dirname "$0")/.."
TIMES=${ANIMA_TEST_TIMES:-.venv/test-times.txt}

table() {
  echo
  echo "make test: wall and CPU time per step (CPU: user + system of its processes)"
  # a step named NAME+ ran beside the next ones (mypy): its wall time is not added to the total
  awk '{ printf "  %-13s %7.1f s wall %7.1f s CPU  %s\n", $1, $2, $3, $4; cpu += $3
         if ($1 !~ /\+$/) total += $2 }
       END { printf "  %-13s %7.1f s wall %7.1f s CPU  (%.1f min)\n", "total", total, cpu, total / 60 }' "$TIMES"
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
# the CPU time of this step's processes (bash's `times`: the children it waited for, and theirs)
times >"$TIMES.cpu"  # in this shell: a $(…) subshell would report its own children, none
cpu=$(tail -1 "$TIMES.cpu" | awk '{ n = split($1 " " $2, t, " "); s = 0
  for (i = 1; i <= n; i++) { split(t[i], ms, "m"); sub("s", "", ms[2]); s += ms[1] * 60 + ms[2] }
  printf "%.2f", s }')
echo "$step $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }') $cpu $outcome" >>"$TIMES"
if [ "$rc" != 0 ]; then
  table
  exit "$rc"
fi
