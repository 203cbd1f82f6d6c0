#!/usr/bin/env bash
# Run make targets as timed stages and end with a table of each stage's seconds.
#
#   tools/run-stages.sh lint unit molecule          one after another; stop at the first failure
#   tools/run-stages.sh lint 'molecule+lab-e2e'     a+b: both at once (output to logs, shown when done;
#                                                    the table gives each one's seconds and the group's wall time)
#   tools/run-stages.sh 'vm+lint,unit,lab'          lanes: a lane is a,b,c one after another (it stops at
#                                                    its first failure); the lanes run at once
#   tools/run-stages.sh --table FILE                print the table of a stages file and exit
#
# Each finished stage appends "name<TAB>seconds<TAB>ok|failed (rc N)" to $GPURACK_STAGES_FILE
# (default .cache/stages.tsv, emptied at start unless GPURACK_STAGES_APPEND=1), so .ci/run can
# add its set-up step and print one table for the whole run.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

STAGES_FILE=${GPURACK_STAGES_FILE:-.cache/stages.tsv}
LOGS=.cache/stage-logs

print_table() {   # $1 stages file; a stage run in a group counts through the group's wall time
  local total=0 name secs result width
  width=$(awk -F'\t' 'BEGIN {w = 22} length($1) > w {w = length($1)} END {print w}' "$1")
  printf '\n%-*s %8s  %s\n' "$width" stage seconds result
  while IFS=$'\t' read -r name secs result; do
    printf '%-*s %8s  %s\n' "$width" "$name" "$secs" "$result"
    [[ $name == *" (in group)" ]] || total=$((total + secs))
  done <"$1"
  printf '%-*s %8s  (%s min)\n' "$width" total "$total" "$(awk -v s="$total" 'BEGIN {printf "%.1f", s / 60}')"
}

if [[ ${1:-} == --table ]]; then
  print_table "${2:?--table needs a file}"
  exit 0
fi

mkdir -p "$(dirname "$STAGES_FILE")" "$LOGS"
rm -f "$LOGS"/*.log
[[ ${GPURACK_STAGES_APPEND:-0} == 1 ]] || : >"$STAGES_FILE"

record() {   # $1 name, $2 seconds, $3 rc
  local result=ok
  [[ $3 -eq 0 ]] || result="failed (rc $3)"
  printf '%s\t%s\t%s\n' "$1" "$2" "$result" >>"$STAGES_FILE"
}

run_one() {   # $1 target: output straight to the terminal
  local start rc
  start=$(date +%s)
  echo "== stage $1"
  make --no-print-directory "$1"
  rc=$?
  record "$1" $(($(date +%s) - start)) "$rc"
  return "$rc"
}

run_lane() {   # $1 group, $2 a,b,...: one after another, each one's output to its log
  local -a targets
  local target rc=0 start
  IFS=, read -ra targets <<<"$2"
  for target in "${targets[@]}"; do
    echo "== stage $target started (in $1; log $LOGS/$target.log)"
    start=$(date +%s)
    make --no-print-directory "$target" >"$LOGS/$target.log" 2>&1
    rc=$?
    record "$target (in group)" $(($(date +%s) - start)) "$rc"
    echo "== stage $target: rc $rc after $(($(date +%s) - start)) s"
    [[ $rc -eq 0 ]] || break
  done
  return "$rc"
}

run_group() {   # $1 lane+lane+...: the lanes at once; each stage's log printed when its lane ends
  local -a lanes pids
  local i target rc failed=0 start
  IFS=+ read -ra lanes <<<"$1"
  start=$(date +%s)
  for i in "${!lanes[@]}"; do
    run_lane "$1" "${lanes[i]}" &
    pids[i]=$!
  done
  for i in "${!lanes[@]}"; do
    wait "${pids[i]}"
    rc=$?
    for target in ${lanes[i]//,/ }; do
      [[ -f $LOGS/$target.log ]] || continue
      echo "== stage $target: its output:"
      cat "$LOGS/$target.log"
    done
    [[ $rc -eq 0 ]] || failed=$rc
  done
  record "group, wall time" $(($(date +%s) - start)) "$failed"
  return "$failed"
}

status=0
for stage in "$@"; do
  if [[ $stage == *+* ]]; then run_group "$stage"; else run_one "$stage"; fi
  status=$?
  [[ $status -eq 0 ]] || break
done
[[ -n ${GPURACK_STAGES_FILE:-} ]] || print_table "$STAGES_FILE"
exit "$status"
