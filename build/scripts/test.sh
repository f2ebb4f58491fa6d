#!/usr/bin/env bash
# test.sh runs sandox's whole test suite on this machine, fresh or not: it
# starts a Docker engine when none answers, makes the base image, installs
# the NATS CLI the integration tests drive, then runs every test with the
# race detector. The integration tests build the sandbox image themselves.
set -euo pipefail
cd "$(dirname "$0")/../.."

bash build/scripts/engine.sh
bash build/scripts/base-image.sh

export PATH="$(go env GOPATH)/bin:$PATH"
if ! command -v nats >/dev/null 2>&1; then
  echo "test: installing the NATS CLI" >&2
  go install github.com/nats-io/natscli/nats@v0.5.1
fi

echo "test: gofmt and go vet" >&2
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  printf 'gofmt would change:\n%s\n' "$unformatted" >&2
  exit 1
fi
go vet ./...

echo "test: go test -race ./..." >&2
go test -race -count=1 -timeout 30m "$@" ./...
