#!/usr/bin/env bash
# Builds every image locally; no image registry is needed on one machine.
#   base      Debian bookworm made with debootstrap + docker import, rebuilt only when
#             cluster/images/base-packages.txt changes
#   taewa     apps/taewa on the base image
#   riwai     apps/riwai (Express) on the base image, node_modules vendored on the host
#   raupi     apps/raupi (Flask + Waitress) on the base image, packages vendored on the host
#   apache    apps/apache (Debian's apache2-bin from the base) serving the 45-byte page
#   orchbench the static orchbench binary (load generator job) FROM scratch
#   pause     the holder of bridge-mode network namespaces (Nomad's docker infra_image)
#   fortio    Fortio (study 000's load tool, cluster/versions.env) FROM scratch, an alternative load runner
#   locust    Locust (study 001's load tool, cluster/images/locust/requirements.txt) on a Debian base with python3
#   dsb       DeathStarBench social network: socialnet, ferretdb FROM scratch; redis, memcached on base
# REGISTRY=host:port pushes every built image there, for real multi-host clusters.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export GOSUMDB=off GOFLAGS=-mod=mod GOTOOLCHAIN=local
export GOPROXY="${GOPROXY:-https://proxy.golang.org}"; GOPROXY="${GOPROXY%,direct}"
say() { printf '[images] %s\n' "$*"; }
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
built=()

content_hash() { (cd "$root" && find "$@" -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-12); }
have() { docker image inspect "$1" >/dev/null 2>&1; }
# Every image also gets the tag "local" (IMAGE_TAG overrides it, so a
# parallel build does not replace the images others deploy), which packs use
# by default: Nomad's docker driver always tries to pull ":latest", and no
# registry is reachable. The exact image ID is recorded with every result.
tag_latest() { docker tag "$1" "${1%:*}:${IMAGE_TAG:-local}"; built+=("$1"); }

base_tag() { echo "orchbench/debian-base:$(content_hash cluster/images/base-packages.txt)"; }

build_base() { debootstrap_image base "$(base_tag)" cluster/images/base-packages.txt; }

# debootstrap_image NAME TAG PACKAGE_LIST: a Debian bookworm image holding the
# listed packages, made with debootstrap and docker import.
debootstrap_image() {
  local name=$1 tag=$2 list=$3
  if have "$tag"; then say "$name: $tag is up to date"; tag_latest "$tag"; return; fi
  command -v debootstrap >/dev/null || { say "debootstrap is missing: run ./justw tools"; exit 1; }
  local pkgs; pkgs=$(grep -v '^#' "$root/$list" | xargs | tr ' ' ',')
  local dir; dir=$(mktemp -d /var/tmp/orchbench-base.XXXXXX)
  say "$name: debootstrap bookworm with $pkgs (about 1-2 minutes)"
  if ! debootstrap --variant=minbase --include="$pkgs" bookworm "$dir" "$mirror" >"$root/.state/logs/debootstrap-$name.log" 2>&1; then
    say "$name: debootstrap failed; last lines of .state/logs/debootstrap-$name.log:"
    tail -n 20 "$root/.state/logs/debootstrap-$name.log" | sed 's/^/    /'
    rm -rf "$dir"; exit 1
  fi
  # services in the image are started by the orchestrator, never by init scripts
  rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
  tar -C "$dir" -c . | docker import - "$tag" >/dev/null
  rm -rf "$dir"
  tag_latest "$tag"
  say "$name: built $tag"
}

# build_ctx NAME TAG DOCKERFILE_TEXT CONTEXT_DIR
build_ctx() {
  local name=$1 tag=$2 dockerfile=$3 ctx=$4
  if have "$tag"; then say "$name: $tag is up to date"; tag_latest "$tag"; return; fi
  say "$name: building $tag"
  printf '%s\n' "$dockerfile" >"$ctx/Dockerfile"
  docker build -q -t "$tag" "$ctx" >"$root/.state/logs/image-$name.log" 2>&1 || {
    say "$name: docker build failed; last lines of .state/logs/image-$name.log:"; tail -n 20 "$root/.state/logs/image-$name.log" | sed 's/^/    /'; exit 1; }
  tag_latest "$tag"
  say "$name: built $tag"
}

build_taewa() {
  build_base
  local tag ctx; tag="orchbench/taewa:$(content_hash apps/taewa cluster/images/base-packages.txt)"
  ctx=$(mktemp -d); cp "$root/apps/taewa/server.js" "$ctx/"
  build_ctx taewa "$tag" "FROM $(base_tag)
COPY server.js /opt/taewa/server.js
ENV PORT=8080
EXPOSE 8080
USER 65534
CMD [\"node\", \"/opt/taewa/server.js\"]" "$ctx"
  rm -rf "$ctx"
}

# The apps of study 000 besides Taewa. Their third-party packages come from
# cluster/vendor.sh (npm ci / pip install --require-hashes on the host, cached
# by lock-file hash), because a build container reaches no registry; the
# runtimes (nodejs, python3, apache2-bin) are in the base image. Each tag
# hashes the app's files, its lock file and the base package list.
build_riwai() {
  build_base
  local tag ctx vendored
  tag="orchbench/riwai:$(content_hash apps/riwai/server.js apps/riwai/package.json apps/riwai/package-lock.json cluster/images/base-packages.txt)"
  have "$tag" && { say "riwai: $tag is up to date"; tag_latest "$tag"; return; }
  vendored=$("$root/cluster/vendor.sh" dir riwai)
  ctx=$(mktemp -d); cp "$root/apps/riwai/server.js" "$ctx/"; cp -a "$vendored/node_modules" "$ctx/"
  build_ctx riwai "$tag" "FROM $(base_tag)
COPY node_modules /opt/riwai/node_modules
COPY server.js /opt/riwai/server.js
ENV PORT=8080 NODE_ENV=production
EXPOSE 8080
USER 65534
CMD [\"node\", \"/opt/riwai/server.js\"]" "$ctx"
  rm -rf "$ctx"
}

build_raupi() {
  build_base
  local tag ctx vendored
  tag="orchbench/raupi:$(content_hash apps/raupi/server.py apps/raupi/requirements.txt cluster/images/base-packages.txt)"
  have "$tag" && { say "raupi: $tag is up to date"; tag_latest "$tag"; return; }
  vendored=$("$root/cluster/vendor.sh" dir raupi)
  ctx=$(mktemp -d); cp "$root/apps/raupi/server.py" "$ctx/"; cp -a "$vendored/site" "$ctx/"
  build_ctx raupi "$tag" "FROM $(base_tag)
COPY site /opt/raupi/site
COPY server.py /opt/raupi/server.py
ENV PORT=8080 PYTHONPATH=/opt/raupi/site PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
EXPOSE 8080
USER 65534
CMD [\"python3\", \"/opt/raupi/server.py\"]" "$ctx"
  rm -rf "$ctx"
}

build_apache() {
  build_base
  local tag ctx
  tag="orchbench/apache:$(content_hash apps/apache/httpd.conf apps/apache/htdocs cluster/images/base-packages.txt)"
  ctx=$(mktemp -d); cp -a "$root/apps/apache/httpd.conf" "$root/apps/apache/htdocs" "$ctx/"
  build_ctx apache "$tag" "FROM $(base_tag)
COPY httpd.conf /opt/apache/httpd.conf
COPY htdocs /opt/apache/htdocs
ENV PORT=8080 APACHE_RUN_DIR=/tmp APACHE_DOCROOT=/opt/apache/htdocs
EXPOSE 8080
USER 65534
CMD [\"apache2\", \"-f\", \"/opt/apache/httpd.conf\", \"-DFOREGROUND\"]" "$ctx"
  rm -rf "$ctx"
}

# go_static NAME PACKAGE [DOCKERFILE_LINE]: a FROM-scratch image holding one
# static Go binary.
go_static() {
  local name=$1 pkg=$2 extra=${3:-} ctx tag
  ctx=$(mktemp -d)
  say "$name: go build $pkg"
  (cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$(git -C "$root" describe --always --dirty 2>/dev/null || echo dev)" -o "$ctx/$name" "$pkg")
  tag="orchbench/$name:$(sha256sum "$ctx/$name" | cut -c1-12)"
  build_ctx "$name" "$tag" "FROM scratch
COPY $name /$name
$extra
ENTRYPOINT [\"/$name\"]" "$ctx"
  rm -rf "$ctx"
}

# The network-namespace holder of bridge-mode allocations (the docker driver's
# infra_image), tagged with a fixed name the Nomad client config refers to.
build_pause() {
  go_static pause ./cluster/images/pause
}

build_dsb() {
  build_base
  go_static socialnet ./deathstarbench/cmd/socialnet
  # the label tells `dsb social-network snapshot` that it seeds from FERRETDB_SEED_DIR
  go_static ferretdb ./deathstarbench/cmd/ferretdb "LABEL orchbench.seed-env=FERRETDB_SEED_DIR"
  local ctx; ctx=$(mktemp -d)
  cp "$root/cluster/images/redis/entrypoint.sh" "$ctx/"
  # /alloc/data is in the image, writable by Redis's user, because Docker
  # gives a new Swarm volume the mode of the directory it is mounted over
  # (Nomad's alloc dir and a Kubernetes emptyDir are world-writable anyway).
  # RDB snapshots are off: the append-only file the pack turns on is the
  # durable form. The label tells `dsb social-network snapshot` that the
  # entrypoint seeds from REDIS_SEED_DIR.
  build_ctx redis "orchbench/redis:$(content_hash cluster/images/base-packages.txt cluster/images/redis)" "FROM $(base_tag)
COPY entrypoint.sh /usr/local/bin/orchbench-redis
RUN chmod 0755 /usr/local/bin/orchbench-redis && mkdir -p /alloc/data && chmod 1777 /alloc/data
LABEL orchbench.seed-env=REDIS_SEED_DIR
USER 65534
ENTRYPOINT [\"/usr/local/bin/orchbench-redis\", \"--save\", \"\", \"--protected-mode\", \"no\"]" "$ctx"
  rm -f "$ctx/Dockerfile" "$ctx/entrypoint.sh"
  cp "$root/cluster/images/memcached/entrypoint.sh" "$ctx/"
  # as Redis: seeded from MEMCACHED_SEED_DIR, a marker in /alloc/data
  build_ctx memcached "orchbench/memcached:$(content_hash cluster/images/base-packages.txt cluster/images/memcached)" "FROM $(base_tag)
COPY entrypoint.sh /usr/local/bin/orchbench-memcached
RUN chmod 0755 /usr/local/bin/orchbench-memcached && mkdir -p /alloc/data && chmod 1777 /alloc/data
LABEL orchbench.seed-env=MEMCACHED_SEED_DIR
USER 65534
ENTRYPOINT [\"/usr/local/bin/orchbench-memcached\"]" "$ctx"
  rm -rf "$ctx"
}

# Fortio's static binary from cluster/tools.sh (cached by version), FROM scratch;
# the tag is the version, so a rebuild happens only when the pin changes.
build_fortio() {
  # shellcheck source=versions.env
  source "$root/cluster/versions.env"
  "$root/cluster/tools.sh" fortio >/dev/null
  local ctx; ctx=$(mktemp -d)
  cp "$root/.tools/bin/fortio" "$ctx/fortio"
  build_ctx fortio "orchbench/fortio:$FORTIO_VERSION" "FROM scratch
COPY fortio /fortio
USER 65534
ENTRYPOINT [\"/fortio\"]" "$ctx"
  rm -rf "$ctx"
}

# Locust from PyPI: the wheels of the pinned requirements are fetched on the
# host (builds reach no registry), cached by the lock's hash, and installed
# offline into a Debian base with python3 (Debian bookworm's 3.11).
PIP_VERSION=26.3
build_locust() {
  local lock=cluster/images/locust/requirements.txt
  local pybase; pybase="orchbench/python-base:$(content_hash cluster/images/locust/base-packages.txt)"
  debootstrap_image python-base "$pybase" cluster/images/locust/base-packages.txt
  local tag; tag="orchbench/locust:$(content_hash cluster/images/locust)"
  if have "$tag"; then say "locust: $tag is up to date"; tag_latest "$tag"; return; fi
  local wheels; wheels="${ORCHBENCH_CACHE:-$HOME/.cache/orchbench}/wheels/locust-$(content_hash cluster/images/locust)"
  if [ ! -f "$wheels/.complete" ]; then
    say "locust: pip download (cp311, manylinux) into $wheels"
    mkdir -p "$wheels"
    python3 -m pip download -q --only-binary=:all: --implementation cp --python-version 3.11 --abi cp311 \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
      -d "$wheels" -r "$root/$lock" "pip==$PIP_VERSION" >"$root/.state/logs/pip-locust.log" 2>&1 || {
      say "locust: pip download failed; last lines of .state/logs/pip-locust.log:"; tail -n 20 "$root/.state/logs/pip-locust.log" | sed 's/^/    /'; exit 1; }
    touch "$wheels/.complete"
  fi
  local ctx; ctx=$(mktemp -d)
  cp -r "$wheels" "$ctx/wheels"; cp "$root/$lock" "$ctx/requirements.txt"
  build_ctx locust "$tag" "FROM $pybase
COPY wheels /tmp/wheels
COPY requirements.txt /tmp/requirements.txt
RUN python3 /tmp/wheels/pip-$PIP_VERSION-py3-none-any.whl/pip install --no-cache-dir --no-index --find-links /tmp/wheels --break-system-packages -r /tmp/requirements.txt && rm -rf /tmp/wheels
USER 65534
ENTRYPOINT [\"locust\"]" "$ctx"
  rm -rf "$ctx"
}

mkdir -p "$root/.state/logs"
"$root/cluster/dockerd.sh" up >/dev/null
targets=("$@"); [ ${#targets[@]} -eq 0 ] && targets=(pause base taewa orchbench)
for t in "${targets[@]}"; do
  case $t in
    base) build_base ;;
    taewa) build_taewa ;;
    riwai) build_riwai ;;
    raupi) build_raupi ;;
    apache) build_apache ;;
    orchbench) go_static orchbench ./harness/cmd/orchbench ;;
    pause) build_pause ;;
    dsb) build_dsb ;;
    fortio) build_fortio ;;
    locust) build_locust ;;
    *) say "unknown image '$t' (known: pause base taewa riwai raupi apache orchbench dsb fortio locust)"; exit 2 ;;
  esac
done
if [ -n "${REGISTRY:-}" ]; then
  for img in "${built[@]}"; do
    say "pushing $REGISTRY/$img"
    docker tag "$img" "$REGISTRY/$img" && docker push -q "$REGISTRY/$img" >/dev/null
  done
fi
