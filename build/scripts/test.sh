#!/usr/bin/env bash
# test.sh runs sandox's whole test suite on this machine, fresh or not: it
# installs and starts what the tests need (test-deps.sh: the Docker engine,
# the base image, Chromium, the NATS CLI, uv), checks gofmt and go vet (lint.sh),
# runs the Python SDK's unit tests (uv run pytest in sdk/python), then runs
# every Go test with the race detector; integration/python_test.go runs the
# Python SDK's integration tests. The integration tests build the sandbox
# image themselves. Arguments go to `go test`.
set -euo pipefail
cd "$(dirname "$0")/../.."

bash build/scripts/test-deps.sh
bash build/scripts/lint.sh

export PATH="$(go env GOPATH)/bin:$PATH"

# pytest exits 0 only when every selected test passed; its other codes
# (1 failures, 2 interrupted, 3 internal error, 4 usage, 5 nothing
# collected) all fail the run, and set -e stops here.
echo "test: uv run pytest (sdk/python)" >&2
(cd sdk/python && UV_PYTHON_DOWNLOADS=never uv run --frozen pytest -q -p no:cacheprovider)

echo "test: go test -race ./..." >&2
go test -race -count=1 -timeout 30m "$@" ./...
