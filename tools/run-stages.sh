#!/usr/bin/env bash
# Run make targets as timed stages and end with a table of each stage's seconds.
#
#   tools/run-stages.sh lint unit molecule          one after another; stop at the first failure
#   tools/run-stages.sh lint 'molecule+lab-e2e'     a+b: both at once (output to logs, shown when done;
#                                                    the table gives each one's seconds and the group's wall time)
#   tools/run-stages.sh --table FILE                print the table of a stages file and exit
#
# Each finished stage appends "name<TAB>seconds<TAB>ok|failed (rc N)" to $GPURACK_STAGES_FILE
# (default .cache/stages.tsv, emptied at start unless GPURACK_STAGES_APPEND=1), so .ci/run can
# add its set-up step and print one table for the whole run.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

STAGES_FILE=${GPURACK_STAGES_FILE:-.cache/stages.tsv}
LOGS=.cache/stage-logs

print_table() {   # $1 stages file
  local total=0 name secs result
  printf '\n%-22s %8s  %s\n' stage seconds result
  while IFS=$'\t' read -r name secs result; do
    printf '%-22s %8s  %s\n' "$name" "$secs" "$result"
    [[ $name == *" (in "* ]] || total=$((total + secs))
  done <"$1"
  printf '%-22s %8s  (%s min)\n' total "$total" "$(awk -v s="$total" 'BEGIN {printf "%.1f", s / 60}')"
}

if [[ ${1:-} == --table ]]; then
  print_table "${2:?--table needs a file}"
  exit 0
fi

mkdir -p "$(dirname "$STAGES_FILE")" "$LOGS"
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

run_group() {   # $1 a+b+...: each in the background, its log printed when it ends
  local -a targets pids
  local i rc failed=0 start
  IFS=+ read -ra targets <<<"$1"
  start=$(date +%s)
  for i in "${!targets[@]}"; do
    echo "== stage ${targets[i]} (concurrently; log $LOGS/${targets[i]}.log)"
    # Each job notes its own end, so a stage that ends first is not timed by the other's wait.
    (make --no-print-directory "${targets[i]}" >"$LOGS/${targets[i]}.log" 2>&1
     echo "$? $(date +%s)" >"$LOGS/${targets[i]}.end") &
    pids[i]=$!
  done
  for i in "${!targets[@]}"; do
    wait "${pids[i]}"
    read -r rc end <"$LOGS/${targets[i]}.end"
    record "${targets[i]} (in $1)" $((end - start)) "$rc"
    echo "== stage ${targets[i]}: rc $rc; its output:"
    cat "$LOGS/${targets[i]}.log"
    [[ $rc -eq 0 ]] || failed=$rc
  done
  record "$1" $(($(date +%s) - start)) "$failed"
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
