#!/usr/bin/env bash
# Attaches N idle containers (default 300) of the sandbox image to one
# bridge made as the orchestrator makes an egress shard (inter-container
# traffic off, an explicit /22), then prints how long that took, the
# bridge's port count and host memory used per container, and removes
# everything it made. Needs the Docker engine and sandox/sandbox; run it
# under the project's Docker lock.
set -euo pipefail
n=${1:-300}
subnet=${SUBNET:-10.243.252.0/22}
net=sandox-density-$$
label=dev.sandox.density=$$
image=${IMAGE:-sandox/sandbox:latest}
cleanup() {
  docker ps -aq --filter "label=$label" | xargs -r docker rm -f >/dev/null
  docker network rm "$net" >/dev/null 2>&1 || true
}
trap cleanup EXIT
avail() { awk '/MemAvailable/ {print $2}' /proc/meminfo; }
docker network create -o com.docker.network.bridge.enable_icc=false --subnet "$subnet" --label "$label" "$net" >/dev/null
bridge=br-$(docker network inspect -f '{{printf "%.12s" .Id}}' "$net")
before=$(avail)
start=$(date +%s.%N)
seq 1 "$n" | xargs -P 4 -I{} docker run -d --label "$label" --network "$net" --entrypoint /bin/sleep \
  --memory 32m --read-only --cap-drop ALL --security-opt no-new-privileges "$image" infinity >/dev/null
end=$(date +%s.%N)
after=$(avail)
ports=$(ip -o link show master "$bridge" | wc -l)
running=$(docker ps -q --filter "label=$label" --filter status=running | wc -l)
members=$(docker network inspect -f '{{len .Containers}}' "$net")
awk -v n="$n" -v s="$start" -v e="$end" -v b="$before" -v a="$after" -v p="$ports" -v r="$running" -v m="$members" 'BEGIN {
  printf "containers started: %d of %d, on the network: %d, bridge ports: %d\n", r, n, m, p
  printf "time: %.1f s (%.0f ms per container, 4 at once)\n", e - s, (e - s) * 1000 / n
  printf "host memory: %.0f MiB in all, %.2f MiB per container\n", (b - a) / 1024, (b - a) / 1024 / n
}'
