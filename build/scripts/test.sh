#!/usr/bin/env bash
# test.sh runs sandox's whole test suite on this machine, fresh or not: it
# installs and starts what the tests need (test-deps.sh: the Docker engine,
# the base image, Chromium, the NATS CLI), checks gofmt and go vet (lint.sh), then
# runs every test with the race detector. The integration tests build the
# sandbox image themselves. Arguments go to `go test`.
set -euo pipefail
cd "$(dirname "$0")/../.."

bash build/scripts/test-deps.sh
bash build/scripts/lint.sh

export PATH="$(go env GOPATH)/bin:$PATH"
echo "test: go test -race ./..." >&2
go test -race -count=1 -timeout 30m "$@" ./...
