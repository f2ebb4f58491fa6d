#!/usr/bin/env bash
# demo.sh brings sandox up on this machine and runs the walkthrough: it
# starts a Docker engine when none answers, builds the images, starts NATS
# and the orchestrator as containers, then runs `sandox demo`.
set -euo pipefail
cd "$(dirname "$0")/../.."

bash build/scripts/engine.sh
go run ./services/cmd/sandox up
go run ./services/cmd/sandox demo
