#!/usr/bin/env bash
# Soaks the random pipeline tester (docs/random_testing.md, "Soaking"): runs apps/random_pipelines
# on many seeds, one after the other, each for a given time, and prints per seed the cases run and
# the failures, then the failing seeds with their shrunk cases (the TESTs random_pipelines prints).
# CI runs fixed seeds (the CTest batch); this is for finding what they do not.
#
# Usage: tools/soak.sh [--build DIR] [--seconds-per-seed N] [--seeds "S1 S2 ..."]
#                      [--first-seed S] [--count N] [--total-seconds T] [--features LIST]
#                      [--max-failures N] [--log DIR]
# Seeds are the list given, or --count seeds from --first-seed (default: 12 seeds from a seed
# drawn from the clock, printed). --total-seconds stops after the seed that reaches it.
# --max-failures is random_pipelines' (the failures after which a seed stops). Exits 1 if any
# seed failed.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build
per_seed=300
seeds=""
first=""
count=12
total=0
features=""
log=""
max_failures=""
while [ $# -gt 0 ]; do
  case "$1" in
  --build) build=$2; shift 2 ;;
  --seconds-per-seed) per_seed=$2; shift 2 ;;
  --seeds) seeds=$2; shift 2 ;;
  --first-seed) first=$2; shift 2 ;;
  --count) count=$2; shift 2 ;;
  --total-seconds) total=$2; shift 2 ;;
  --features) features=$2; shift 2 ;;
  --log) log=$2; shift 2 ;;
  --max-failures) max_failures=$2; shift 2 ;;
  *) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done

app="$build/apps/random_pipelines"
if [ ! -x "$app" ]; then
  echo "no $app: build the apps first (cmake --build $build --target random_pipelines)" >&2
  exit 2
fi
if [ -z "$seeds" ]; then
  [ -n "$first" ] || first=$(( $(date +%s) % 1000000 ))
  seeds=$(seq "$first" $((first + count - 1)) | tr '\n' ' ')
fi
[ -n "$log" ] || log=$(mktemp -d "${TMPDIR:-/tmp}/slinky-soak.XXXXXX")
mkdir -p "$log"

args=()
[ -z "$features" ] || args+=(--features "$features")
[ -z "$max_failures" ] || args+=(--max-failures "$max_failures")
echo "soak: seeds $seeds, $per_seed s each${features:+, features $features}; logs in $log"
start=$SECONDS
failed_seeds=()
total_cases=0
for s in $seeds; do
  out="$log/seed_$s.txt"
  status=0
  # In the background so that an interrupted soak stops its run too.
  "$app" --seconds "$per_seed" --seed "$s" "${args[@]}" >"$out" 2>&1 &
  child=$!
  trap 'kill "$child" 2>/dev/null; exit 130' INT TERM
  wait "$child" || status=$?
  trap - INT TERM
  # The last line: "N cases, M pipelines built and run in X s; F failed".
  summary=$(grep -E '^[0-9]+ cases, ' "$out" | tail -1 || true)
  cases=$(echo "$summary" | sed -E 's/^([0-9]+) cases.*/\1/')
  [ -n "$cases" ] || cases=0
  total_cases=$((total_cases + cases))
  if [ "$status" -ne 0 ] || [ -z "$summary" ]; then
    failed_seeds+=("$s")
    echo "seed $s: FAILED: ${summary:-no summary (exit status $status)}"
  else
    echo "seed $s: $summary"
  fi
  if [ "$total" -gt 0 ] && [ $((SECONDS - start)) -ge "$total" ]; then break; fi
done
echo "soak: $total_cases cases in $((SECONDS - start)) s; ${#failed_seeds[@]} seed(s) failed${failed_seeds[*]:+: ${failed_seeds[*]}}"
for s in "${failed_seeds[@]}"; do
  echo
  echo "== seed $s: failures and shrunk cases ($log/seed_$s.txt)"
  grep -v '^random pipelines: seed' "$log/seed_$s.txt" | grep -vE '^[0-9]+ cases, ' || true
done
[ ${#failed_seeds[@]} -eq 0 ]
