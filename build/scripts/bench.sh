#!/usr/bin/env bash
# Brings sandox up as `sandox up` runs it (NATS and the orchestrator in
# their containers), runs build/cmd/sandox-bench against it, prints its one
# table and brings sandox down again. The peer run uses llm-sandbox from
# PyPI in a virtual environment under ~/.cache/sandox (made once). CI does
# not run it. Flags go to sandox-bench, e.g.
#   bash build/scripts/bench.sh -cold 10 -idle 100
# Run it under the shared Docker lock on a machine where others use Docker:
#   flock /tmp/sandox-docker.lock bash build/scripts/bench.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
bash build/scripts/engine.sh >&2

venv="${SANDOX_BENCH_VENV:-$HOME/.cache/sandox/bench-venv}"
if ! "$venv/bin/python" -c 'import llm_sandbox' 2>/dev/null; then
  echo "installing llm-sandbox into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q 'llm-sandbox[docker]==0.3.46' >&2
fi

bin="$(mktemp -d)"
go build -o "$bin/" ./services/cmd/sandox ./build/cmd/sandox-bench
"$bin/sandox" up >&2
trap '"$bin/sandox" down >&2; rm -rf "$bin"' EXIT
# The NATS container's own address: round trips are also timed without the
# engine's userland proxy of the published port.
direct="nats://$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' sandox-nats):4222"
"$bin/sandox-bench" -python "$venv/bin/python" -direct-nats "$direct" "$@"
