#!/usr/bin/env bash
# test-deps.sh makes sure this machine has what the tests need, fresh or not:
# a Docker engine that answers, the base image, a second Docker engine (the
# multi-host test, integration/multihost), e2fsprogs and the loop
# driver's control node (disk limits), Chromium (the browser tools), the
# Neo4j jars, pip, uv and Docker Compose (compose.yaml's test,
# integration/deploy). It is idempotent and quick when everything is
# present. (The NATS CLI the integration tests drive is a tool dependency
# in go.mod: test.sh builds it with its race build.)
#
# Independent steps run side by side: the engines start and apt installs;
# then the base image, the Neo4j jars and uv come at once. Every Debian
# package missing goes in one apt transaction.
set -euo pipefail
cd "$(dirname "$0")/../.."
. build/scripts/apt.sh

pids=()
# background runs a step in the background, its output prefixed with its
# name; wait_all fails when any of them failed.
background() {
  local name=$1
  shift
  ( "$@" 2>&1 | sed -u "s/^/[$name] /" >&2; exit "${PIPESTATUS[0]}" ) &
  pids+=("$!")
}
wait_all() {
  local failed=0
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  pids=()
  return "$failed"
}

bash build/scripts/engine.sh
# The multi-host chaos test plays two hosts on this machine: a second dockerd
# with its own socket, data root and bridge (docs/deploy.md).
bash build/scripts/engine2.sh

# The Debian packages, in one transaction:
# - disk limits (internal/disks, integration TestDiskLimit) format ext4
#   images and attach them to loop devices: e2fsprogs;
# - the browser tools (tools/web, integration TestWebTools) drive the
#   distribution's Chromium, never a downloaded browser;
# - the image builds download wheels on the host with pip (uv for the
#   sandbox image, the pinned qdrant-edge wheels, build/wheels.go);
# - the data service's tests run Neo4j Community on the host's JDK, and the
#   integration tests build sandox/neo4j from the same jars (Maven, a JDK);
# - a base image made without a registry needs mmdebstrap;
# - compose.yaml is run as written (integration/deploy TestCompose) under
#   Debian's Docker Compose 1.29, which speaks to the 20.10 engine.
missing=()
{ command -v mkfs.ext4 && command -v debugfs; } >/dev/null 2>&1 || missing+=(e2fsprogs)
[ -x /usr/bin/chromium ] || missing+=(chromium fonts-liberation)
python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
{ command -v mvn && command -v javac; } >/dev/null 2>&1 || missing+=(maven openjdk-17-jdk-headless)
command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
if [ ${#missing[@]} -gt 0 ]; then
  echo "test: installing ${missing[*]}" >&2
  apt_install "${missing[@]}"
fi
if [ ! -e /dev/loop-control ]; then
  modprobe loop 2>/dev/null || mknod -m 600 /dev/loop-control c 10 237 || true
fi

background base-image bash build/scripts/base-image.sh
# The jars are fetched once (build/neo4j/pom.xml) into the gitignored cache.
background neo4j bash build/scripts/neo4j-jars.sh
# The Python SDK (sdk/python) is tested with uv, which the uv wheel on PyPI
# carries; uv then takes the SDK's locked dependencies from PyPI.
install_uv() {
  # A distribution's own Python refuses pip outside a virtual environment
  # (PEP 668) unless told otherwise; uv is a self-contained binary.
  python3 -m pip install --quiet "uv==0.13.9" ||
    python3 -m pip install --quiet --break-system-packages "uv==0.13.9"
  if command -v pyenv >/dev/null 2>&1; then pyenv rehash; fi
}
if ! command -v uv >/dev/null 2>&1; then
  echo "test: installing uv" >&2
  background uv install_uv
fi
wait_all
