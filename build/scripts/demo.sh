#!/usr/bin/env bash
# demo.sh brings sandox up on this machine and runs the walkthrough: it
# starts a Docker engine when none answers, builds the images, starts NATS
# and the control plane as containers, then runs `sandox demo`. The CLI
# compiles while the engine installs and starts, and stays in bin/sandox
# (`bin/sandox down` stops it all again).
set -euo pipefail
cd "$(dirname "$0")/../.."

mkdir -p bin
# The flags of the images' binaries (build.goBuildFlags, CGO_ENABLED=0):
# the packages compiled here are the ones `sandox up` then takes from Go's
# build cache for the executor and the control plane.
CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags='-s -w' -o bin/sandox ./services/cmd/sandox &
cli=$!
bash build/scripts/engine.sh
wait "$cli"
bin/sandox up
bin/sandox demo
