#!/usr/bin/env bash
# Fuzzes every parser for TIME each (default 5s) past the seed corpora that
# `go test` replays. Go's fuzzer can end a target with "context deadline
# exceeded" when -fuzztime runs out while a worker is inside a slow input
# (seen on FuzzPackVariables under `just test-unit`): no input failed then,
# since a finding always says "Failing input written to", so that target
# runs once more. A finding, or any other failure, fails at once.
# Each new interesting input is minimized for at most 50 runs: Go's default
# (a minute of runs per input) spent whole seconds shrinking the large spec
# seeds, so FuzzParse ran about 20 inputs in 5 s and then none at all.
set -euo pipefail
cd "$(dirname "$0")/.."
time=${1:-5s}
targets=(loadgen:FuzzResponseParsersAgree loadgen:FuzzParseWrk2Text experiment:FuzzParse contract:FuzzParseContract pack:FuzzPackVariables)
for t in "${targets[@]}"; do
  for attempt in 1 2; do
    status=0
    out=$(go test -run '^$' -fuzz "^${t#*:}\$" -fuzztime "$time" -fuzzminimizetime 50x "./harness/${t%%:*}/" 2>&1) || status=$?
    printf '%s\n' "$out"
    [[ $status == 0 ]] && break
    if [[ $attempt == 2 || $out == *"Failing input written"* || $out != *"context deadline exceeded"* ]]; then
      exit "$status"
    fi
    echo "[fuzz] ${t#*:}: the fuzzer's deadline passed inside an input and no input failed; running it once more"
  done
done
