#!/usr/bin/env bash
# Builds every image locally; no image registry is needed on one machine.
#   base      Debian bookworm made with debootstrap + docker import, rebuilt only when
#             cluster/images/base-packages.txt changes; also unpacked into
#             .state/exec-rootfs, the exec driver's userland
#   taewa     apps/taewa on the base image
#   riwai     apps/riwai (Express) on the base image, node_modules vendored on the host
#   raupi     apps/raupi (Flask + Waitress) on the base image, packages vendored on the host
#   voting    apps/voting (study 001's Django app, runserver or gunicorn) on the base image,
#             packages vendored on the host; its stores are the postgres and redis (dsb) images
#   apache    apps/apache (Debian's apache2-bin from the base) serving the 45-byte page
#   frontier  apps/frontier (study 003) on the base image: the Express web tier (node_modules
#             vendored on the host), the remote service and the function pool (python3); and redis
#   redis     Debian's redis-server on base (also built by dsb)
#   orchbench the static orchbench binary (load generator job) FROM scratch
#   pause     the holder of bridge-mode network namespaces (Nomad's docker infra_image)
#   fortio    Fortio (study 000's load tool, cluster/versions.env) FROM scratch, an alternative load runner
#   locust    Locust (study 001's load tool, cluster/images/locust/requirements.txt) on a Debian base with python3
#   jre       Debian's OpenJDK 17 JRE on base
#   jmeter    JMeter (study 004's load tool, cluster/images/jmeter/pom.xml) from Maven Central, on jre
#   artillery Artillery (study 003's load tool, cluster/images/artillery/package-lock.json) on the base's Node 18
#   dsb       DeathStarBench: socialnet, hotelres, mediamicro, ferretdb FROM scratch; redis, memcached on base
#   postgres     Debian's PostgreSQL 15 on base (study 004's database)
#   books-node   apps/books-node (Express + sequelize) on base, node_modules from `npm ci` on the host
#   books-kotlin apps/books-kotlin (Spring Boot jar built by Maven on the host) on orchbench/jre,
#                Debian's OpenJDK 17 JRE on base
#   node      an emulated cluster node (cluster/nodes.sh): base plus Debian's docker.io,
#             iptables, iproute2, procps and curl; Nomad and Consul are bind-mounted at run time
#   host      an emulated host for `just remote-up` (cluster/hosts.sh): base plus systemd as
#             PID 1, sshd and sudo; nothing of orchbench's, as a fresh Debian machine
# Debian packages an image adds to the base are downloaded on the host (apt
# resolves them against the base's own dpkg status) and installed with dpkg
# in the build, so no build needs a registry; they are cached by the base
# and the package list under ${ORCHBENCH_CACHE:-~/.cache/orchbench}/debs.
# REGISTRY=host:port pushes every built image there, for real multi-host clusters.
# debootstrap takes Debian from the mirror the machine's apt sources name, or
# from DEBIAN_MIRROR=URL (cluster/registries.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export GOSUMDB=off GOFLAGS=-mod=mod GOTOOLCHAIN=local
GOPROXY=$("$root/cluster/registries.sh" goproxy); export GOPROXY
say() { printf '[images] %s\n' "$*"; }
built=()

cache="${ORCHBENCH_CACHE:-$HOME/.cache/orchbench}"
content_hash() { (cd "$root" && find "$@" -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-12); }
# src_hash PATH...: content_hash without build outputs (node_modules, target, __pycache__).
src_hash() { (cd "$root" && find "$@" \( -name node_modules -o -name target -o -name __pycache__ \) -prune -o -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-12); }
have() { docker image inspect "$1" >/dev/null 2>&1; }
# Every image also gets the tag "local" (IMAGE_TAG overrides it, so a
# parallel build does not replace the images others deploy), which packs use
# by default: Nomad's docker driver always tries to pull ":latest", and no
# registry is reachable. The exact image ID is recorded with every result.
tag_latest() { docker tag "$1" "${1%:*}:${IMAGE_TAG:-local}"; built+=("$1"); }

base_tag() { echo "orchbench/debian-base:$(content_hash cluster/images/base-packages.txt)"; }

build_base() { debootstrap_image base "$(base_tag)" cluster/images/base-packages.txt; export_exec_rootfs; }

# export_exec_rootfs unpacks the base image into .state/exec-rootfs, the
# userland Nomad's exec driver puts in its chroot (cluster/embedded.sh
# chroot_env). A task on exec (study 000's "process") then runs the very
# node, python3 and apache2 files its container twin runs, not the host's
# (which may be another major version), so the two forms differ only in
# isolation. Redone only when the base image changes.
export_exec_rootfs() {
  local tag; tag=$(base_tag)
  local dir="$root/.state/exec-rootfs" mark="$root/.state/exec-rootfs.image"
  [ -d "$dir/usr" ] && [ "$(cat "$mark" 2>/dev/null)" = "$tag" ] && return
  say "exec-rootfs: unpacking $tag into .state/exec-rootfs"
  mkdir -p "$root/.state"
  local tmp; tmp=$(mktemp -d "$root/.state/exec-rootfs.XXXXXX")
  local c; c=$(docker create --network none "$tag" /bin/true)
  docker export "$c" | tar -C "$tmp" -x
  docker rm "$c" >/dev/null
  # running tasks hold hard links, not the directory, so it can be replaced
  rm -rf "$dir"; mv "$tmp" "$dir"; chmod 755 "$dir"
  echo "$tag" >"$mark"
}

# debootstrap_image NAME TAG PACKAGE_LIST: a Debian bookworm image holding the
# listed packages, made with debootstrap and docker import.
debootstrap_image() {
  local name=$1 tag=$2 list=$3
  if have "$tag"; then say "$name: $tag is up to date"; tag_latest "$tag"; return; fi
  command -v debootstrap >/dev/null || { say "debootstrap is missing: run ./justw tools"; exit 1; }
  local pkgs; pkgs=$(grep -v '^#' "$root/$list" | xargs | tr ' ' ',')
  local mirror; mirror=$("$root/cluster/registries.sh" debian-mirror bookworm) || exit 1
  local dir; dir=$(mktemp -d /var/tmp/orchbench-base.XXXXXX)
  say "$name: debootstrap bookworm from $mirror with $pkgs (about 1-2 minutes)"
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

# Study 003's three programs in one image: the web tier (node server.js,
# the default command), the remote service and the function pool (python3
# remote.py / pool.py, the pack's command for those tasks). Node and Python
# are in the base; Express and redis come from cluster/vendor.sh.
build_frontier() {
  build_base
  build_redis
  local tag ctx vendored files=(server.js settings.js upstream.js cache.js)
  tag="orchbench/frontier:$(content_hash "${files[@]/#/apps/frontier/}" apps/frontier/package.json apps/frontier/package-lock.json \
    apps/frontier/service/work.py apps/frontier/service/remote.py apps/frontier/service/pool.py cluster/images/base-packages.txt)"
  have "$tag" && { say "frontier: $tag is up to date"; tag_latest "$tag"; return; }
  vendored=$("$root/cluster/vendor.sh" dir frontier)
  ctx=$(mktemp -d); mkdir "$ctx/app" "$ctx/app/service"
  (cd "$root/apps/frontier" && cp "${files[@]}" "$ctx/app/" && cp service/work.py service/remote.py service/pool.py "$ctx/app/service/")
  cp -a "$vendored/node_modules" "$ctx/app/"
  build_ctx frontier "$tag" "FROM $(base_tag)
COPY app /opt/frontier
ENV PORT=8080 NODE_ENV=production PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /opt/frontier
EXPOSE 8080
USER 65534
CMD [\"node\", \"/opt/frontier/server.js\"]" "$ctx"
  rm -rf "$ctx"
}

# Study 001's voting app: Django, psycopg2, redis-py and gunicorn vendored
# like Raupi's packages; the tests and realstores.py stay out of the image.
# One entrypoint, manage.py: the default command serves, the pack's v0
# worker runs `vote_worker`.
build_voting() {
  build_base
  local tag ctx vendored app=(manage.py voting_site voting)
  tag="orchbench/voting:$(src_hash apps/voting/manage.py apps/voting/voting_site apps/voting/voting apps/voting/requirements.txt cluster/images/base-packages.txt)"
  have "$tag" && { say "voting: $tag is up to date"; tag_latest "$tag"; return; }
  vendored=$("$root/cluster/vendor.sh" dir voting)
  ctx=$(mktemp -d); mkdir "$ctx/app"
  (cd "$root/apps/voting" && cp -r "${app[@]}" "$ctx/app/")
  find "$ctx/app" -name __pycache__ -prune -exec rm -rf {} +
  cp -a "$vendored/site" "$ctx/"
  build_ctx voting "$tag" "FROM $(base_tag)
COPY site /opt/voting/site
COPY app/ /opt/voting/
RUN python3 -m compileall -q /opt/voting/voting /opt/voting/voting_site
WORKDIR /opt/voting
ENV PORT=8000 PYTHONPATH=/opt/voting/site PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
EXPOSE 8000
USER 65534
ENTRYPOINT [\"python3\", \"/opt/voting/manage.py\"]
CMD [\"serve\"]" "$ctx"
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

# Redis on the base: the social network's store and study 003's cache.
build_redis() {
  build_base
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
  rm -rf "$ctx"
}

build_dsb() {
  build_base
  go_static socialnet ./deathstarbench/cmd/socialnet
  go_static hotelres ./deathstarbench/cmd/hotelres
  go_static mediamicro ./deathstarbench/cmd/mediamicro
  # the label tells `dsb social-network snapshot` that it seeds from FERRETDB_SEED_DIR
  go_static ferretdb ./deathstarbench/cmd/ferretdb "LABEL orchbench.seed-env=FERRETDB_SEED_DIR"
  build_redis
  local ctx; ctx=$(mktemp -d)
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

# Artillery from npm: the tree of cluster/images/artillery/package-lock.json,
# installed on the host by cluster/vendor.sh's `npm ci` (no install scripts: they fetch a
# browser for Artillery's Playwright engine) and cached by the lock's hash,
# on the base image, whose Debian nodejs (bookworm's 18) Artillery 2.0.21
# runs on. posthog-node is removed: Artillery 2.0.21 sends a telemetry event
# at every run even with ARTILLERY_DISABLE_TELEMETRY set, and it loads that
# client inside a try, so without it nothing leaves the machine.
build_artillery() {
  build_base
  local h; h=$(content_hash cluster/images/artillery)
  local tag; tag="orchbench/artillery:$(printf '%s\n' "$h" "$(base_tag)" | sha256sum | cut -c1-12)"
  if have "$tag"; then say "artillery: $tag is up to date"; tag_latest "$tag"; return; fi
  local mods; mods=$("$root/cluster/vendor.sh" dir artillery)
  local ctx; ctx=$(mktemp -d); mkdir "$ctx/app"
  cp -r "$root/cluster/images/artillery/package.json" "$mods/node_modules" "$ctx/app/"
  rm -rf "$ctx/app/node_modules/posthog-node"
  # HOME: Artillery keeps a config file there; nobody has none of its own
  build_ctx artillery "$tag" "FROM $(base_tag)
COPY app/ /opt/artillery/
ENV ARTILLERY_DISABLE_TELEMETRY=true HOME=/tmp
USER 65534
ENTRYPOINT [\"node\", \"/opt/artillery/node_modules/artillery/bin/run\"]" "$ctx"
  rm -rf "$ctx"
  local version; version=$(sed -n 's/.*"artillery": "\([0-9.]*\)".*/\1/p' "$root/cluster/images/artillery/package.json")
  docker run --rm --network none "$tag" --version 2>&1 | grep -q "Artillery: $version" || { say "artillery: $tag does not run Artillery $version"; exit 1; }
}

# deb_layer NAME PACKAGE...: the .deb files that PACKAGE... need beyond what
# the base image holds, downloaded on the host into a cache dir keyed by the
# base and the list; prints the dir.
deb_layer() {
  local name=$1; shift
  local key dir tmp log="$root/.state/logs/debs-$name.log"
  key=$(printf '%s\n' "$(base_tag)" "$@" | sha256sum | cut -c1-12)
  dir="$cache/debs/$name-$key"
  if [ -f "$dir/.complete" ]; then echo "$dir"; return; fi
  tmp=$(mktemp -d); mkdir -p "$tmp/archives/partial"
  docker run --rm "$(base_tag)" cat /var/lib/dpkg/status >"$tmp/status"
  local get=(apt-get -q -o "Dir::State::status=$tmp/status" -o "Dir::Cache::archives=$tmp/archives" -o Debug::NoLocking=1
    install --download-only -y --no-install-recommends "$@")
  say "$name: downloading the Debian packages of $* the base lacks" >&2
  # stale package lists name versions the mirror no longer has: update once
  if ! "${get[@]}" >"$log" 2>&1; then
    { apt-get -q update && "${get[@]}"; } >>"$log" 2>&1 || {
      say "$name: apt-get download failed; last lines of .state/logs/debs-$name.log:" >&2
      tail -n 20 "$log" | sed 's/^/    /' >&2; rm -rf "$tmp"; exit 1; }
  fi
  mkdir -p "$dir"; mv "$tmp"/archives/*.deb "$dir"/; rm -rf "$tmp"
  touch "$dir/.complete"
  echo "$dir"
}

# deb_image NAME TAG PREPARE PACKAGE...: TAG is the base with PACKAGE...
# installed, made by dpkg in a container that sees the downloaded .debs
# through a read-only bind mount, then committed: the image holds the
# installed files only, not a layer of .deb files (the classic builder
# here has no RUN --mount). PREPARE is a shell command run before dpkg.
deb_image() {
  local name=$1 tag=$2 prepare=$3; shift 3
  if have "$tag"; then return; fi
  local debs c="orchbench-debs-$name-$$"
  debs=$(deb_layer "$name" "$@")
  say "$name: installing $(find "$debs" -name '*.deb' | wc -l) Debian packages into $tag"
  docker rm -f "$c" >/dev/null 2>&1 || true
  docker run --name "$c" --network none --user 0 -v "$debs:/tmp/debs:ro" "$(base_tag)" /bin/sh -c \
    "set -e; $prepare; dpkg -i /tmp/debs/*.deb; rm -rf /var/cache/apt/archives/*.deb" >"$root/.state/logs/debs-$name-install.log" 2>&1 || {
    say "$name: dpkg failed; last lines of .state/logs/debs-$name-install.log:"; tail -n 20 "$root/.state/logs/debs-$name-install.log" | sed 's/^/    /'
    docker rm -f "$c" >/dev/null 2>&1; exit 1; }
  # the container ran dpkg through /bin/sh -c: the image keeps none of that
  docker commit --change "CMD [\"/bin/sh\"]" --change "USER root" "$c" "$tag" >/dev/null
  docker rm -f "$c" >/dev/null
}

# The Debian packages each layer adds (their versions are Debian bookworm's,
# as the base's are).
postgres_debs=(postgresql-15)
jre_debs=(openjdk-17-jre-headless)
# iproute2's tc sets a node's link delay (netem), iputils-ping measures it;
# the CNI plugins make Nomad's bridge networking (the packs' docker tasks).
node_debs=(docker.io iptables iproute2 iputils-ping containernetworking-plugins procps curl ca-certificates)

build_postgres() {
  build_base
  local key tag ctx
  key=$({ content_hash cluster/images/base-packages.txt cluster/images/postgres; echo "${postgres_debs[*]}"; } | sha256sum | cut -c1-12)
  tag="orchbench/postgres:$key"
  if have "$tag"; then say "postgres: $tag is up to date"; tag_latest "$tag"; return; fi
  # No cluster is made at install time (the entrypoint makes one in PGDATA),
  # and no service is started.
  # the installed packages depend on the base and the list only, not on the entrypoint
  local debs_tag; debs_tag="orchbench/postgres-debs:$(printf '%s\n' "$(base_tag)" "${postgres_debs[@]}" | sha256sum | cut -c1-12)"
  deb_image postgres "$debs_tag" \
    "mkdir -p /etc/postgresql-common && echo 'create_main_cluster = false' >/etc/postgresql-common/createcluster.conf && printf '#!/bin/sh\\nexit 101\\n' >/usr/sbin/policy-rc.d && chmod 0755 /usr/sbin/policy-rc.d && trap 'rm -f /usr/sbin/policy-rc.d' EXIT" \
    "${postgres_debs[@]}"
  ctx=$(mktemp -d)
  cp "$root/cluster/images/postgres/entrypoint.sh" "$ctx/"
  # /alloc/data is in the image, writable by postgres, for Swarm volumes
  # (see the Redis image).
  build_ctx postgres "$tag" "FROM $debs_tag
COPY entrypoint.sh /usr/local/bin/orchbench-postgres
RUN chmod 0755 /usr/local/bin/orchbench-postgres && mkdir -p /alloc/data && chmod 1777 /alloc/data
USER postgres
ENTRYPOINT [\"/usr/local/bin/orchbench-postgres\"]
CMD []" "$ctx"
  rm -rf "$ctx"
}

# build_node: the image of cluster/nodes.sh's nodes. Its tag hashes the base
# and the package list; the agents' binaries are not in it (the nodes mount
# the pinned ones from .tools/bin), so a Nomad or Consul upgrade rebuilds nothing.
build_node() {
  build_base
  local tag; tag="orchbench/node:$(printf '%s\n' "$(base_tag)" "${node_debs[@]}" | sha256sum | cut -c1-12)"
  if have "$tag"; then say "node: $tag is up to date"; tag_latest "$tag"; return; fi
  # docker.io's maintainer scripts would start the daemon; a node's runtime
  # is started by cluster/nodes.sh with flags only it knows
  deb_image node "$tag" \
    "printf '#!/bin/sh\\nexit 101\\n' >/usr/sbin/policy-rc.d && chmod 0755 /usr/sbin/policy-rc.d && trap 'rm -f /usr/sbin/policy-rc.d' EXIT" \
    "${node_debs[@]}"
  docker run --rm --network none "$tag" dockerd --version >/dev/null 2>&1 || { say "node: dockerd does not run in $tag"; exit 1; }
  tag_latest "$tag"
  say "node: built $tag"
}

# systemd (PID 1 is /lib/systemd/systemd itself: systemd-sysv only links
# /sbin/init to it, and dpkg -i of both at once fails on its pre-dependency)
# and sshd are what hashi-up needs of a host (it refuses one
# without systemd); unzip unpacks the packages it uploads; iptables and
# iproute2 are what Docker needs once remote-up installs it.
host_debs=(systemd dbus openssh-server sudo unzip iproute2 iptables procps curl ca-certificates)

# build_host: the image of cluster/hosts.sh's emulated hosts.
build_host() {
  build_base
  local tag debs_tag ctx
  tag="orchbench/host:$({ printf '%s\n' "$(base_tag)" "${host_debs[@]}"; content_hash cluster/images/host; } | sha256sum | cut -c1-12)"
  if have "$tag"; then say "host: $tag is up to date"; tag_latest "$tag"; return; fi
  debs_tag="orchbench/host-debs:$(printf '%s\n' "$(base_tag)" "${host_debs[@]}" | sha256sum | cut -c1-12)"
  # openssh-server's and dbus' maintainer scripts would start their daemons
  deb_image host "$debs_tag" \
    "printf '#!/bin/sh\\nexit 101\\n' >/usr/sbin/policy-rc.d && chmod 0755 /usr/sbin/policy-rc.d && trap 'rm -f /usr/sbin/policy-rc.d' EXIT" \
    "${host_debs[@]}"
  ctx=$(mktemp -d); cp "$root/cluster/images/host/setup.sh" "$ctx/"
  # systemd stops on SIGRTMIN+3, not on docker's SIGTERM
  build_ctx host "$tag" "FROM $debs_tag
COPY setup.sh /tmp/setup.sh
RUN sh /tmp/setup.sh && rm /tmp/setup.sh
ENV container=docker
STOPSIGNAL SIGRTMIN+3
CMD [\"/lib/systemd/systemd\"]" "$ctx"
  rm -rf "$ctx"
}

jre_tag() { echo "orchbench/jre:$(printf '%s\n' "$(base_tag)" "${jre_debs[@]}" | sha256sum | cut -c1-12)"; }

build_jre() {
  build_base
  local tag; tag=$(jre_tag)
  if have "$tag"; then say "jre: $tag is up to date"; return; fi
  deb_image jre "$tag" "true" "${jre_debs[@]}"
  docker run --rm "$tag" java -version >/dev/null 2>&1 || { say "jre: java does not run in $tag"; exit 1; }
  say "jre: built $tag"
}

build_books_node() {
  build_base
  local tag ctx; tag="orchbench/books-node:$(src_hash apps/books-node cluster/images/base-packages.txt)"
  if have "$tag"; then say "books-node: $tag is up to date"; tag_latest "$tag"; return; fi
  command -v npm >/dev/null || { say "books-node: npm is missing (Debian's nodejs ships it here): run ./justw tools"; exit 1; }
  ctx=$(mktemp -d); mkdir "$ctx/app"
  (cd "$root/apps/books-node" && cp package.json package-lock.json server.js books.js "$ctx/app/")
  say "books-node: npm ci (exact versions from package-lock.json)"
  (cd "$ctx/app" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund) >"$root/.state/logs/npm-books-node.log" 2>&1 || {
    say "books-node: npm ci failed; last lines of .state/logs/npm-books-node.log:"; tail -n 20 "$root/.state/logs/npm-books-node.log" | sed 's/^/    /'; exit 1; }
  build_ctx books-node "$tag" "FROM $(base_tag)
COPY app/ /opt/books-node/
ENV PORT=8080
EXPOSE 8080
USER 65534
CMD [\"node\", \"/opt/books-node/server.js\"]" "$ctx"
  rm -rf "$ctx"
}

# kotlin_jar: the Spring Boot jar of apps/books-kotlin, built by Maven in a
# copy of its sources and cached by their content hash, so unchanged sources
# are never built again. MAVEN_REPO_LOCAL (default ~/.m2/repository) holds
# the downloaded dependencies; prints the jar's path.
kotlin_jar() {
  local h jar log="$root/.state/logs/maven-books-kotlin.log"
  h=$(src_hash apps/books-kotlin)
  jar="$cache/books-kotlin/$h/books-kotlin.jar"
  if [ -f "$jar" ]; then say "books-kotlin: jar $h from the build cache" >&2; echo "$jar"; return; fi
  command -v mvn >/dev/null || { say "books-kotlin: mvn is missing (Debian's maven): run ./justw tools" >&2; exit 1; }
  local src began; src=$(mktemp -d)
  cp -r "$root/apps/books-kotlin/pom.xml" "$root/apps/books-kotlin/src" "$src/"
  say "books-kotlin: mvn package (cold ~40 s with downloads, warm ~15 s)" >&2
  began=$(date +%s)
  (cd "$src" && mvn -B -q -DskipTests -Dmaven.repo.local="${MAVEN_REPO_LOCAL:-$HOME/.m2/repository}" package) >"$log" 2>&1 || {
    say "books-kotlin: mvn failed; last lines of .state/logs/maven-books-kotlin.log:" >&2; tail -n 30 "$log" | sed 's/^/    /' >&2; rm -rf "$src"; exit 1; }
  mkdir -p "$(dirname "$jar")"; cp "$src/target/books-kotlin.jar" "$jar.tmp"; mv "$jar.tmp" "$jar"
  rm -rf "$src"
  say "books-kotlin: jar $h built in $(( $(date +%s) - began )) s" >&2
  echo "$jar"
}

build_books_kotlin() {
  build_jre
  local tag ctx jar; tag="orchbench/books-kotlin:$(printf '%s\n' "$(src_hash apps/books-kotlin)" "$(jre_tag)" | sha256sum | cut -c1-12)"
  if have "$tag"; then say "books-kotlin: $tag is up to date"; tag_latest "$tag"; return; fi
  jar=$(kotlin_jar)
  ctx=$(mktemp -d); cp "$jar" "$ctx/books-kotlin.jar"
  # The JVM sizes its heap from the container's memory limit.
  build_ctx books-kotlin "$tag" "FROM $(jre_tag)
COPY books-kotlin.jar /opt/books-kotlin/books-kotlin.jar
ENV PORT=8080
EXPOSE 8080
USER 65534
CMD [\"java\", \"-XX:MaxRAMPercentage=75\", \"-jar\", \"/opt/books-kotlin/books-kotlin.jar\"]" "$ctx"
  rm -rf "$ctx"
}

# JMeter (study 004's load tool): the headless home cluster/images/jmeter/home.sh
# assembles from Maven Central, run by its launcher (the JVM's flags), on
# orchbench/jre.
build_jmeter() {
  build_jre
  local home tag ctx
  home=$("$root/cluster/images/jmeter/home.sh")
  tag="orchbench/jmeter:$(printf '%s\n' "$(basename "$home")" "$(jre_tag)" | sha256sum | cut -c1-12)"
  if have "$tag"; then say "jmeter: $tag is up to date"; tag_latest "$tag"; return; fi
  ctx=$(mktemp -d); cp -r "$home" "$ctx/jmeter"
  build_ctx jmeter "$tag" "FROM $(jre_tag)
COPY jmeter/ /opt/jmeter/
USER 65534
ENTRYPOINT [\"/opt/jmeter/bin/jmeter\"]" "$ctx"
  rm -rf "$ctx"
  docker run --rm "$tag" --version -j /tmp/jmeter.log >/dev/null 2>&1 || { say "jmeter: JMeter does not start in $tag"; exit 1; }
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
    voting) build_voting ;;
    apache) build_apache ;;
    frontier) build_frontier ;;
    redis) build_redis ;;
    orchbench) go_static orchbench ./harness/cmd/orchbench ;;
    pause) build_pause ;;
    dsb) build_dsb ;;
    fortio) build_fortio ;;
    locust) build_locust ;;
    jre) build_jre ;;
    jmeter) build_jmeter ;;
    artillery) build_artillery ;;
    postgres) build_postgres ;;
    books-node) build_books_node ;;
    books-kotlin) build_books_kotlin ;;
    books) build_postgres; build_books_node; build_books_kotlin ;;
    node) build_node ;;
    host) build_host ;;
    *) say "unknown image '$t' (known: pause base taewa riwai raupi voting apache frontier redis orchbench dsb fortio locust jre jmeter artillery postgres books-node books-kotlin books node host)"; exit 2 ;;
  esac
done
# Both tags: the content-hash one, and the one packs and jobs name (local),
# which a node pulling from the registry must find too.
if [ -n "${REGISTRY:-}" ]; then
  for img in "${built[@]}"; do
    for ref in "$img" "${img%:*}:${IMAGE_TAG:-local}"; do
      say "pushing $REGISTRY/$ref"
      docker tag "$ref" "$REGISTRY/$ref" && docker push -q "$REGISTRY/$ref" >/dev/null \
        || { say "docker push $REGISTRY/$ref failed"; exit 1; }
    done
  done
fi
