#!/usr/bin/env bash
# lint.sh fails when a Go file is not gofmt'ed or go vet reports a problem.
set -euo pipefail
cd "$(dirname "$0")/../.."

echo "lint: gofmt and go vet" >&2
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  printf 'gofmt would change:\n%s\n' "$unformatted" >&2
  exit 1
fi
# With -race, vet type-checks against the packages the race build and
# go test -race compile (no file of the module depends on the race tag), so
# test.sh compiles the module and its dependencies once, not twice.
go vet -race ./...
# The image's executor is built with the tag nowebtools (build.Builder.Sandbox).
go vet -race -tags nowebtools ./tools/builtin/ ./executor/...
