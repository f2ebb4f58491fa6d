#!/usr/bin/env bash
# engine.sh makes sure a Docker engine answers on this machine. It is idempotent:
# when `docker info` already answers it does nothing. Otherwise it installs the
# distribution's engine (Debian: docker.io) when dockerd is missing and starts it
# detached, logging to ${SANDOX_DOCKERD_LOG:-/var/log/sandox-dockerd.log}.
set -euo pipefail

log() { printf 'engine: %s\n' "$*" >&2; }

if docker info >/dev/null 2>&1; then
  log "docker engine answers ($(docker version --format '{{.Server.Version}} API {{.Server.APIVersion}}'))"
  exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    log "no Docker engine: install Docker (https://docs.docker.com/engine/install/) and start it, then run this again"
    exit 1
  fi
  log "installing the distribution's Docker engine (docker.io)"
  . "$(dirname "$0")/apt.sh"
  apt_install docker.io
fi

if [ "$(id -u)" != 0 ]; then
  log "dockerd is installed but not running, and starting it needs root: run 'sudo $0'"
  exit 1
fi

logfile=${SANDOX_DOCKERD_LOG:-/var/log/sandox-dockerd.log}
log "starting dockerd (log: $logfile)"
# dockerd outlives this script: it must not inherit any other open file,
# such as the descriptor of a lock its caller holds (flock), which it would
# then hold for as long as it runs.
(
  for fd in /proc/self/fd/*; do
    fd=${fd##*/}
    if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
  done
  exec setsid dockerd >"$logfile" 2>&1 < /dev/null
) &
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then
    log "docker engine answers ($(docker version --format '{{.Server.Version}} API {{.Server.APIVersion}}'))"
    exit 0
  fi
  sleep 1
done
log "dockerd did not answer within 60 s; last lines of $logfile:"
tail -20 "$logfile" >&2
exit 1
