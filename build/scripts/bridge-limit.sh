#!/usr/bin/env bash
# Attaches veth ports to one Linux bridge, inside a network namespace of
# its own, until the kernel refuses one; prints how many it held.
set -euo pipefail
ns=sandox-bridge-limit-$$
ip netns add "$ns"
trap 'ip netns del "$ns"' EXIT
ip -n "$ns" link add br0 type bridge
n=${1:-1100}
batch=$(mktemp)
for i in $(seq 1 "$n"); do echo "link add v$i type veth peer name p$i"; done >"$batch"
ip -n "$ns" -batch "$batch"
held=0
for i in $(seq 1 "$n"); do
  if ! err=$(ip -n "$ns" link set "v$i" master br0 2>&1); then
    echo "port $i refused: $err"
    break
  fi
  held=$i
done
echo "bridge ports held: $held"
rm -f "$batch"
