#!/usr/bin/env bash
# test-deps.sh makes sure this machine has what the tests need, fresh or not:
# a Docker engine that answers, the base image, a second Docker engine (the
# multi-host test, integration/multihost), e2fsprogs and the loop
# driver's control node (disk limits), Chromium (the browser tools),
# Docker Compose (compose.yaml's test), and the NATS CLI the integration
# tests drive. It is idempotent and quick
# when everything is present.
set -euo pipefail
cd "$(dirname "$0")/../.."

bash build/scripts/engine.sh
bash build/scripts/base-image.sh
# The multi-host chaos test plays two hosts on this machine: a second dockerd
# with its own socket, data root and bridge (docs/deploy.md).
bash build/scripts/engine2.sh

# Disk limits (services/disks, integration TestDiskLimit) format ext4 images
# and attach them to loop devices: e2fsprogs and the loop driver's control
# node. The tests run as root, as CI does.
if ! command -v mkfs.ext4 >/dev/null 2>&1 || ! command -v debugfs >/dev/null 2>&1; then
  echo "test: installing e2fsprogs" >&2
  apt-get install -y -qq e2fsprogs >/dev/null
fi
if [ ! -e /dev/loop-control ]; then
  modprobe loop 2>/dev/null || mknod -m 600 /dev/loop-control c 10 237 || true
fi

# The browser tools (tools/web, integration TestWebTools) drive the
# distribution's Chromium; never a downloaded browser.
if [ ! -x /usr/bin/chromium ]; then
  echo "test: installing chromium" >&2
  apt-get install -y -qq chromium fonts-liberation >/dev/null ||
    { apt-get update -qq && apt-get install -y -qq chromium fonts-liberation >/dev/null; }
fi

# The data service's tests run Neo4j Community on the host's JDK, and the
# integration tests build sandox/neo4j from the same jars: Maven and a JDK,
# and the jars fetched once (build/neo4j/pom.xml) into the gitignored cache.
bash build/scripts/neo4j-jars.sh

# The image builds download wheels on the host with pip (uv for the sandbox
# image, the pinned qdrant-edge wheels, cached by the hash of
# services/qdrantedge/requirements.txt in build/wheels.go).
if ! python3 -m pip --version >/dev/null 2>&1; then
  echo "test: installing python3-pip" >&2
  apt-get install -y -qq python3-pip >/dev/null ||
    { apt-get update -qq && apt-get install -y -qq python3-pip >/dev/null; }
fi

# compose.yaml is run as written (integration/deploy TestCompose) under
# Debian's Docker Compose 1.29, which speaks to the 20.10 engine.
if ! command -v docker-compose >/dev/null 2>&1; then
  echo "test: installing docker-compose" >&2
  apt-get install -y -qq docker-compose >/dev/null ||
    { apt-get update -qq && apt-get install -y -qq docker-compose >/dev/null; }
fi

export PATH="$(go env GOPATH)/bin:$PATH"
if ! command -v nats >/dev/null 2>&1; then
  echo "test: installing the NATS CLI" >&2
  go install github.com/nats-io/natscli/nats@v0.5.1
fi

# The Python SDK (sdk/python) is tested with uv, which the uv wheel on PyPI
# carries; uv then takes the SDK's locked dependencies from PyPI.
if ! command -v uv >/dev/null 2>&1; then
  echo "test: installing uv" >&2
  # A distribution's own Python refuses pip outside a virtual environment
  # (PEP 668) unless told otherwise; uv is a self-contained binary.
  python3 -m pip install --quiet "uv==0.13.9" ||
    python3 -m pip install --quiet --break-system-packages "uv==0.13.9"
  if command -v pyenv >/dev/null 2>&1; then pyenv rehash; fi
fi
