#!/usr/bin/env bash
# neo4j-jars.sh fetches, on the host, the Neo4j Community jars that
# build/neo4j/pom.xml pins (org.neo4j:neo4j:5.26.30: 214 jars, 123 MiB,
# about 70 s cold) into $1 (default the user's cache, where build.DefaultConfig
# keeps it too: ~/.cache/sandox/neo4j/lib, one copy per machine) and
# compiles build/neo4j/Main.java against them into $1/../classes. It
# installs Maven and a JDK 17 when missing, and does nothing when the jars
# are already there.
set -euo pipefail
cd "$(dirname "$0")/../.."
lib="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/sandox/neo4j/lib}"
classes="$(dirname "$lib")/classes"
# Test packages run in parallel and may each ask for the jars: one fetches,
# the others wait for it and then find them there.
mkdir -p "$(dirname "$lib")"
exec 9>"$(dirname "$lib")/.lock"
flock 9
if ! command -v mvn >/dev/null 2>&1 || ! command -v javac >/dev/null 2>&1; then
  echo "neo4j: installing maven and openjdk-17-jdk-headless" >&2
  . build/scripts/apt.sh
  apt_install maven openjdk-17-jdk-headless
fi
if [ ! -f "$lib/.complete" ]; then
  echo "neo4j: fetching jars into $lib" >&2
  mkdir -p "$lib"
  mvn -q -B -f build/neo4j/pom.xml dependency:copy-dependencies \
    -DoutputDirectory="$(realpath "$lib")" -DincludeScope=runtime
  touch "$lib/.complete"
fi
if [ ! -f "$classes/Main.class" ] || [ build/neo4j/Main.java -nt "$classes/Main.class" ]; then
  mkdir -p "$classes"
  javac -nowarn -d "$classes" -cp "$lib/*" build/neo4j/Main.java
fi
