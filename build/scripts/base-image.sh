#!/usr/bin/env bash
# base-image.sh makes the Debian base image every sandox image starts FROM
# (default name sandox/base:bookworm). It is idempotent and tries, in order:
#   1. the image is already present: nothing to do;
#   2. pull the official debian:bookworm-slim and tag it (a machine with a registry);
#   3. build it from the distribution's packages with debootstrap, using the
#      mirror this machine's apt is configured with (a machine with no registry).
set -euo pipefail

image=${SANDOX_BASE_IMAGE:-sandox/base:bookworm}
suite=bookworm
log() { printf 'base-image: %s\n' "$*" >&2; }

if docker image inspect "$image" >/dev/null 2>&1; then
  log "$image is present"
  exit 0
fi

if [ "${SANDOX_SKIP_PULL:-}" != 1 ] && timeout 60 docker pull -q debian:bookworm-slim >/dev/null 2>&1; then
  docker tag debian:bookworm-slim "$image"
  log "$image tagged from the pulled debian:bookworm-slim"
  exit 0
fi
log "no registry answered; building $image with debootstrap"

mirror=${SANDOX_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
  # The machine's own apt configuration names the mirror; never hard-code one.
  mirror=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -v security | head -1 || true)
  [ -n "$mirror" ] || mirror=$(grep -hs '^deb ' /etc/apt/sources.list | awk '{print $2}' | grep -v security | head -1 || true)
fi
if [ -z "$mirror" ]; then
  log "cannot find a Debian mirror in the apt sources; set SANDOX_DEBIAN_MIRROR"
  exit 1
fi

if ! command -v debootstrap >/dev/null 2>&1; then
  log "installing debootstrap"
  . "$(dirname "$0")/apt.sh"
  apt_install debootstrap
fi

root=$(mktemp -d /tmp/sandox-rootfs.XXXXXX)
trap 'rm -rf "$root"' EXIT
log "debootstrap $suite from $mirror (about a minute)"
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates,procps \
  "$suite" "$root" "$mirror" >/tmp/sandox-debootstrap.log 2>&1 || {
  tail -20 /tmp/sandox-debootstrap.log >&2
  exit 1
}
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | docker import - "$image" >/dev/null
log "$image imported ($(docker image inspect -f '{{.Size}}' "$image") bytes)"
