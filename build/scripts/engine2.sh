#!/usr/bin/env bash
# engine2.sh starts a second Docker engine on this machine, so that one
# machine can play two sandox hosts (integration/multihost, docs/deploy.md).
# It is idempotent and quick when the engine already answers.
#
# The second engine is a second dockerd with everything of its own: socket
# (SANDOX_DOCKER2_HOST, default unix:///run/sandox-docker2.sock), data root,
# exec root, pid file, identity (see below), containerd (dockerd starts a managed one under the exec
# root) and containerd namespaces, cgroup parent, bridge (sandox-br2 on
# 10.213.0.1/24) and default address pools (10.214.0.0/16 in /24s), none of
# which overlaps the first engine's (docker0, 172.17.0.0/16, and the default
# pools 172.17-31.0.0/16 and 192.168.0.0/16). It leaves iptables alone
# (--iptables=false, --ip-masq=false): the chains are shared by every engine
# on a machine, and sandboxes reach the bus through a Unix socket, not the
# network. The first engine is not touched.
#
# An engine's ID comes from /etc/docker/key.json, a path dockerd 20.10 has
# no flag for, and sandox keys a host's ledger by it: two engines reading
# the same key would be one host to it. So the second dockerd runs in a
# mount namespace of its own (slave: it sees the machine's mounts, the
# machine does not see its) where /etc/docker is its own directory.
#
# It runs with --live-restore. Not for the feature: dockerd 20.10 (and
# Moby since), when it starts and finds its previous default "bridge"
# network, deletes that network and then, when default address pools are
# set and live restore is off, deletes the link named docker0
# (daemon_unix.go, removeDefaultBridgeInterface), whatever --bridge says.
# That link is the first engine's: every restart of this engine after the
# first took the default bridge from under the first one, and its builds and
# database containers failed with "could not find bridge docker0". The
# script checks after the start that docker0 is still there.
#
# It then loads the images sandboxes need from the first engine
# (docker save | docker -H ... load), skipping those whose image id already
# matches, so a rebuilt image is copied again and an unchanged one is not.
# The multihost test does the same copy itself, after building the images.
set -euo pipefail

log() { printf 'engine2: %s\n' "$*" >&2; }

host=${SANDOX_DOCKER2_HOST:-unix:///run/sandox-docker2.sock}
sock=${host#unix://}
root=${SANDOX_DOCKER2_ROOT:-/var/lib/sandox-docker2}
exec_root=${SANDOX_DOCKER2_EXEC_ROOT:-/run/sandox-docker2}
bridge=${SANDOX_DOCKER2_BRIDGE:-sandox-br2}
bridge_ip=${SANDOX_DOCKER2_BRIDGE_IP:-10.213.0.1/24}
pools=${SANDOX_DOCKER2_POOLS:-base=10.214.0.0/16,size=24}
logfile=${SANDOX_DOCKERD2_LOG:-/var/log/sandox-dockerd2.log}
images=${SANDOX_DOCKER2_IMAGES:-sandox/sandbox:latest sandox/base:bookworm}

d2() { docker -H "$host" "$@"; }

# copy_images loads each image the first engine has into the second when
# the second lacks it or holds another id under the same name.
copy_images() {
  for image in $images; do
    local want have
    want=$(docker image inspect -f '{{.Id}}' "$image" 2>/dev/null) || {
      log "$image: not on the first engine (yet), skipped"
      continue
    }
    have=$(d2 image inspect -f '{{.Id}}' "$image" 2>/dev/null || true)
    if [ "$want" = "$have" ]; then
      continue
    fi
    log "loading $image (${want:7:12}) into the second engine"
    docker save "$image" | d2 load -q >/dev/null
  done
}

if d2 info >/dev/null 2>&1; then
  if [ "$(d2 info -f '{{.ID}}')" != "$(docker info -f '{{.ID}}' 2>/dev/null)" ]; then
    copy_images
    log "second engine answers on $host"
    exit 0
  fi
  # One started before it had an identity of its own: start it again.
  log "the second engine has the first one's ID: restarting it"
  kill "$(cat "$exec_root/dockerd.pid")"
  for _ in $(seq 1 30); do
    d2 info >/dev/null 2>&1 || break
    sleep 1
  done
fi

# engine.sh installs dockerd when it is missing (and starts the first
# engine, which test-deps.sh has done already); when dockerd is there, the
# first engine is left as it is.
if ! command -v dockerd >/dev/null 2>&1; then
  bash "$(dirname "$0")/engine.sh"
fi

if [ "$(id -u)" != 0 ]; then
  log "starting a second dockerd needs root: run 'sudo $0'"
  exit 1
fi

if ! ip link show "$bridge" >/dev/null 2>&1; then
  log "creating bridge $bridge ($bridge_ip)"
  ip link add name "$bridge" type bridge
  ip addr add "$bridge_ip" dev "$bridge"
  ip link set "$bridge" up
fi

mkdir -p "$root" "$exec_root"
# Its own (empty) configuration file: a /etc/docker/daemon.json written for
# the first engine must not apply to this one.
etc="$root/etc-docker"
mkdir -p "$etc" /etc/docker
[ -f "$etc/daemon.json" ] || echo '{}' >"$etc/daemon.json"
rm -f "$sock"

# The daemon must not inherit this script's open files: run under
# `flock LOCK bash engine2.sh`, it would otherwise hold the lock for as long
# as it runs, and every later `flock LOCK ...` would wait for ever.
closefds_then_exec() {
  local me=$BASHPID fd
  for fd in $(ls "/proc/$me/fd"); do
    if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
  done
  exec "$@"
}

had_docker0=false
if ip link show docker0 >/dev/null 2>&1; then had_docker0=true; fi

log "starting a second dockerd on $host (log: $logfile)"
closefds_then_exec setsid unshare --mount --propagation slave sh -c 'mount --bind "$0" /etc/docker && exec "$@"' "$etc" \
  dockerd \
  --config-file /etc/docker/daemon.json \
  --host "$host" \
  --data-root "$root" \
  --exec-root "$exec_root" \
  --pidfile "$exec_root/dockerd.pid" \
  --containerd-namespace sandox2 \
  --containerd-plugins-namespace sandox2-plugins \
  --cgroup-parent sandox-docker2 \
  --bridge "$bridge" \
  --default-address-pool "$pools" \
  --iptables=false --ip-masq=false \
  --live-restore \
  >"$logfile" 2>&1 </dev/null &
for _ in $(seq 1 60); do
  if d2 info >/dev/null 2>&1; then
    if $had_docker0 && ! ip link show docker0 >/dev/null 2>&1; then
      log "starting the second engine removed the first engine's docker0; restart the first engine (engine.sh)"
      exit 1
    fi
    copy_images
    log "second engine answers on $host ($(d2 version --format '{{.Server.Version}}'))"
    exit 0
  fi
  sleep 1
done
log "the second dockerd did not answer within 60 s; last lines of $logfile:"
tail -20 "$logfile" >&2
exit 1
