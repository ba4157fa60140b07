#!/usr/bin/env bash
# Builds Mercury (Accenture's mercury-composable, the Java framework the REST automation and Event
# Script specs come from) and the benchmark's Mercury application (bench/mercury), idempotently,
# into .cache/mercury, for bench/src/mercury.bench.ts:
#   system/platform-core and system/event-script-engine from the v$MERCURY_VERSION sources, their
#   dependencies from Maven Central, installed into .cache/mercury/m2; then bench/mercury packaged
#   on them as one executable jar, .cache/mercury/mercury-bench.jar.
# Usage: tools/mercury.sh [install|path]
#   path: builds if needed, then prints "<java binary><TAB><jar>"; prints nothing when skipped.
# Where a prerequisite is missing it prints one "skipped: …" line and exits 0, so `make bench` runs on.
# Environment:
#   MERCURY_REPO     git URL or local clone of mercury-composable
#                    (default https://github.com/Accenture/mercury-composable.git)
#   MERCURY_VERSION  the release tag without its v (default 4.11.10)
#   MERCURY_JAVA_HOME  a JDK 21+ (default: JAVA_HOME, then the newest JDK under MERCURY_JVM_DIR)
#   MERCURY_JVM_DIR  where JDKs are installed (default /usr/lib/jvm, Debian's and Temurin's place)
#   MVN              the Maven command (default mvn)
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache="$root/.cache/mercury"
version=${MERCURY_VERSION:-4.11.10}
repo=${MERCURY_REPO:-https://github.com/Accenture/mercury-composable.git}
src="$cache/src-$version"
m2="$cache/m2"
jar="$cache/mercury-bench.jar"
app="$root/bench/mercury"
jvm_dir=${MERCURY_JVM_DIR:-/usr/lib/jvm}
mvn_cmd=${MVN:-mvn}

say() { echo "mercury: $*" >&2; }
skip() { say "skipped: $*"; exit 0; }

java_major() { "$1/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1; }

# The first JDK (javac present) of version 21 or newer: Mercury 4.x is built for Java 21.
find_jdk() {
  local candidates=("${MERCURY_JAVA_HOME:-}" "${JAVA_HOME:-}")
  local d
  for d in $(ls -d "$jvm_dir"/*/ 2>/dev/null | sort -rV); do candidates+=("${d%/}"); done
  for d in "${candidates[@]}"; do
    [ -n "$d" ] && [ -x "$d/bin/javac" ] || continue
    local major; major=$(java_major "$d")
    if [ -n "$major" ] && [ "$major" -ge 21 ]; then echo "$d"; return; fi
  done
}

sources() {
  [ -f "$src/system/platform-core/pom.xml" ] && return
  say "fetching mercury-composable v$version from $repo"
  rm -rf "$src.part" && mkdir -p "$src.part"
  if [ -d "$repo" ] && git -C "$repo" rev-parse --verify -q "v$version^{commit}" >/dev/null; then
    git -C "$repo" archive "v$version" system/platform-core system/event-script-engine | tar -x -C "$src.part"
  elif ! git clone -q --depth 1 --branch "v$version" "$repo" "$src.part/clone" 2>/dev/null; then
    rm -rf "$src.part"
    skip "cannot get Mercury's sources from $repo (set MERCURY_REPO to a clone of mercury-composable)"
  else
    mv "$src.part/clone/system" "$src.part/system" && rm -rf "$src.part/clone"
  fi
  mv "$src.part" "$src"
}

# The app is rebuilt when its sources change: the stamp is a hash of bench/mercury.
stamp() { (cd "$app" && find . -type f -not -path './target/*' | sort | xargs sha256sum) | sha256sum | cut -c1-16; }

build() {
  local jdk; jdk=$(find_jdk)
  [ -n "$jdk" ] || skip "needs Java 21+ (no JDK 21 or newer in MERCURY_JAVA_HOME, JAVA_HOME or $jvm_dir)"
  command -v "$mvn_cmd" >/dev/null || skip "needs Maven (Debian package maven)"
  local want; want="$version-$(stamp)"
  if [ -f "$jar" ] && [ "$(cat "$cache/built" 2>/dev/null)" = "$want" ]; then JDK=$jdk; return; fi
  sources
  local start=$SECONDS
  local mvn=(env JAVA_HOME="$jdk" nice "$mvn_cmd" -B -q -Dmaven.repo.local="$m2" -Dmaven.test.skip=true)
  for module in platform-core event-script-engine; do
    if [ ! -f "$m2/org/platformlambda/$module/$version/$module-$version.jar" ]; then
      say "building $module $version (Maven Central for its dependencies)"
      (cd "$src/system/$module" && "${mvn[@]}" install)
    fi
  done
  say "packaging bench/mercury on Mercury $version"
  local out="$cache/app-build"
  rm -rf "$out" && mkdir -p "$out" && cp -r "$app/pom.xml" "$app/src" "$out/"
  (cd "$out" && "${mvn[@]}" -Dmercury.version="$version" package)
  cp "$out/target/mercury-bench-4.11.10.jar" "$jar"
  rm -rf "$out"
  echo "$want" > "$cache/built"
  say "built in $((SECONDS - start))s: $jar"
  JDK=$jdk
}

mkdir -p "$cache"
case "${1:-install}" in
  install) build ;;
  path) build; printf '%s\t%s\n' "$JDK/bin/java" "$jar" ;;
  *) say "usage: tools/mercury.sh [install|path]"; exit 1 ;;
esac
