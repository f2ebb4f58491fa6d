#!/usr/bin/env bash
# Runs the benchmarks on real components (Docker engine, NATS, sandbox
# containers) and prints a table of time per operation. Needs what the tests
# need: run build/scripts/test.sh once first on a fresh machine.
#   bash build/scripts/bench.sh [iterations]   (default 30)
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-30}"
bash build/scripts/engine.sh >&2
out=$(go test -run '^$' -bench . -benchtime "${n}x" ./integration/)
echo "$out" | awk -v n="$n" '
  /^Benchmark/ {
    name = $1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name)
    ms = $3 / 1e6
    rows[++count] = sprintf("| %-40s | %10.2f ms |", name, ms)
  }
  END {
    if (count == 0) { print "no benchmark results" > "/dev/stderr"; exit 1 }
    printf "| %-40s | %13s |\n", "benchmark (" n " iterations)", "time per op"
    printf "|%s|%s|\n", "------------------------------------------", "---------------"
    for (i = 1; i <= count; i++) print rows[i]
  }'
