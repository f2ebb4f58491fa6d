#!/usr/bin/env bash
# test.sh runs sandox's whole test suite on this machine, fresh or not: it
# installs and starts what the tests need (test-deps.sh: the Docker engine,
# the base image, Chromium, uv; the NATS CLI it builds itself), checks gofmt
# and go vet (lint.sh), runs the Python SDK's unit tests (uv run pytest in
# sdk/python), then runs every Go test with the race detector;
# integration/python_test.go runs the Python SDK's integration tests. The
# integration tests build the sandbox image themselves. Arguments go to
# `go test`.
set -euo pipefail
cd "$(dirname "$0")/../.."

# Much of preparing a machine waits on the network (apt, mmdebstrap, the
# Neo4j jars, PyPI); compiling waits on the CPU. So the race build of every
# package (which go vet and go test then take from Go's build cache) and
# lint.sh run in the background while test-deps.sh prepares the machine.
mkdir -p .cache
# Each phase says how long the run has taken so far, so that a slow run
# shows where its time went (docs/running.md gives a fresh machine's).
began=$SECONDS
phase() { echo "test: $* (after $((SECONDS - began)) s)" >&2; }
# The race build comes first, then the NATS CLI, in one job: two go
# commands at once would each compile the same packages. The NATS CLI,
# which the integration tests drive, is a tool dependency in go.mod
# (github.com/nats-io/natscli/nats): built with -race against the module's
# own versions, it takes nats-server, nats.go and most of its other
# packages from the race build instead of compiling them again. The job
# fails when the CLI does not build; a failed race build fails go test
# below with the same words.
(
  go build -race ./... > .cache/race-build.log 2>&1 || true
  go build -race -o .cache/bin/nats github.com/nats-io/natscli/nats > .cache/nats-cli.log 2>&1
) &
build=$!
bash build/scripts/test-deps.sh
phase "the machine is ready"
if ! wait "$build"; then
  cat .cache/nats-cli.log >&2
  exit 1
fi
phase "the race build and the NATS CLI are done"

# lint.sh (gofmt, go vet -race) runs beside go test: vet type-checks what
# the race build compiled, and go test spends much of its time waiting on
# containers. Its failure fails the run at the end.
bash build/scripts/lint.sh > .cache/lint.log 2>&1 &
lint=$!

export PATH="$PWD/.cache/bin:$PATH"

# The Python SDK's unit tests run beside the Go tests (they wait mostly on
# uv's downloads). pytest exits 0 only when every selected test passed; its
# other codes (1 failures, 2 interrupted, 3 internal error, 4 usage, 5
# nothing collected) all fail the run.
echo "test: uv run pytest (sdk/python), beside go test" >&2
# The environment is made first: integration/python_test.go runs pytest in
# it too, and two uv runs must not both make it.
(cd sdk/python && UV_PYTHON_DOWNLOADS=never uv sync --frozen --quiet)
(cd sdk/python && UV_PYTHON_DOWNLOADS=never uv run --frozen pytest -q -p no:cacheprovider) > .cache/pytest.log 2> .cache/pytest.err &
pytest=$!

# Twice as many test packages run at once as there are cores (go test's
# default is as many), and twice as many parallel tests of a package
# (integration/doc.go says which): the integration packages spend much of
# their time waiting on containers. They are named first, and the longest
# unit package (services/orchestrator, about 100 s) next, so that go test
# builds and starts them before the other unit packages, whose queue takes
# the slots they leave (docs/running.md has figures).
procs=$(( $(nproc) * 2 ))
packages=(./integration/... ./services/orchestrator ./...)
echo "test: go test -race -p $procs -parallel $procs ${packages[*]}" >&2
status=0
go test -race -count=1 -timeout 30m -p "$procs" -parallel "$procs" "$@" "${packages[@]}" || status=$?
phase "go test is done"

if ! wait "$lint"; then
  status=$((status == 0 ? 1 : status))
fi
cat .cache/lint.log >&2
phase "lint is done"

echo "test: pytest (sdk/python)" >&2
wait "$pytest" || status=$((status == 0 ? 1 : status))
# What pytest wrote to stderr first, then its report, which ends with the
# count of tests passed and failed.
cat .cache/pytest.err >&2
cat .cache/pytest.log
phase "done"
exit "$status"
