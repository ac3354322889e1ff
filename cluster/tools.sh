#!/usr/bin/env bash
# Installs every pinned tool into .tools/bin: Debian packages with apt, Go tools by
# building their release modules from the Go module proxy through a wrapper module
# (the proxy refuses module listings, so `go install MOD@VER` cannot work here).
# Finished builds are cached by version under ${ORCHBENCH_CACHE:-~/.cache/orchbench}/tools,
# so a fresh clone restores them in a second.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=versions.env
source "$root/cluster/versions.env"
bin="$root/.tools/bin"
logs="$root/.tools/logs"
cache="${ORCHBENCH_CACHE:-$HOME/.cache/orchbench}/tools"
mkdir -p "$bin" "$logs" "$cache"

export GOSUMDB=off GOFLAGS=-mod=mod GOTOOLCHAIN=local
GOPROXY=$("$root/cluster/registries.sh" goproxy); export GOPROXY

tool="" step=""
say() { printf '[tools] %s\n' "$*"; }
# shellcheck source=lib.sh
source "$root/cluster/lib.sh"
fail() {
  say "FAILED: tool $tool, step $step"
  say "command: $*"
  if [ -f "$logs/$tool.log" ]; then
    say "last 40 lines of .tools/logs/$tool.log:"
    tail -n 40 "$logs/$tool.log" | sed 's/^/    /'
  fi
  exit 1
}
# run STEP CMD...: runs one build step, logging to .tools/logs/<tool>.log.
run() {
  step=$1; shift
  say "$tool: $step"
  echo "+ $*" >>"$logs/$tool.log"
  "$@" >>"$logs/$tool.log" 2>&1 || fail "$@"
}

apt_install() {
  local missing=()
  for p in $APT_PACKAGES; do
    output_has 'ok installed$' dpkg-query -W -f='${Status}' "$p" 2>/dev/null || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && { say "debian packages: all present"; return; }
  if [ "$(id -u)" != 0 ]; then
    say "missing Debian packages: ${missing[*]}"
    say "run as root: apt-get install -y --no-install-recommends ${missing[*]}"
    exit 1
  fi
  tool=apt step=install
  say "debian packages: installing ${missing[*]}"
  # packages must not start their daemons (etcd, redis, memcached, dockerd) on
  # the host: the cluster scripts start what they need, bound where they choose
  local policy=/usr/sbin/policy-rc.d own_policy=""
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' >"$policy"; chmod +x "$policy"; own_policy=1; fi
  { DEBIAN_FRONTEND=noninteractive apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"; } \
    >>"$logs/apt.log" 2>&1 || { if [ -n "$own_policy" ]; then rm -f "$policy"; fi; fail apt-get install "${missing[@]}"; }
  if [ -n "$own_policy" ]; then rm -f "$policy"; fi
}

# installed NAME VERSION BINARY...: true when every binary is in .tools/bin at VERSION,
# restoring them from the version cache or taking them from PATH when possible.
installed() {
  local name=$1 version=$2; shift 2
  local stamp="$bin/.$name.version"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$version" ] && all_present "$bin" "$@"; then
    return 0
  fi
  if all_present "$cache/$name-$version" "$@"; then
    for b in "$@"; do install_bin "$cache/$name-$version/$b" "$bin/$b"; done
    echo "$version" >"$stamp"
    say "$name $version: restored from cache"
    return 0
  fi
  if [ $# -eq 1 ] && on_path_at "$1" "$version"; then
    ln -sf "$(command -v "$1")" "$bin/$1"
    echo "$version" >"$stamp"
    say "$name $version: using $(command -v "$1") from PATH"
    return 0
  fi
  return 1
}
# install_bin SRC DST: a rename, not an overwrite, so a binary the running
# cluster executes (nomad, victoria-metrics) can be replaced; the running
# process keeps the old file until it restarts.
install_bin() { cp "$1" "$2.new" && mv -f "$2.new" "$2"; }
all_present() { local d=$1; shift; for b in "$@"; do [ -x "$d/$b" ] || return 1; done; }
on_path_at() {
  local p v; p=$(PATH="${PATH//$bin:/}" command -v "$1" 2>/dev/null) || return 1
  v=$("$p" version 2>/dev/null) || return 1
  [[ ${v%%$'\n'*} == *"${2#v}"* ]]
}
finish() {
  local name=$1 version=$2; shift 2
  mkdir -p "$cache/$name-$version"
  for b in "$@"; do cp "$bin/$b" "$cache/$name-$version/$b"; done
  echo "$version" >"$bin/.$name.version"
}

# wrapper MOD VERSION: prepares a wrapper module in $work whose go.mod is MOD's own
# (so every dependency stays at the version the release was tested with).
wrapper() {
  local mod=$1 version=$2
  if [ "$GOPROXY" = off ]; then
    say "FAILED: tool $tool: no Go module proxy to build it from (neither GOPROXY nor \`go env GOPROXY\` names one before direct or off; set GOPROXY=URL)"
    exit 1
  fi
  work="$root/.tools/build/$tool"
  rm -rf "$work"; mkdir -p "$work"
  step="download $mod@$version"
  say "$tool: $step"
  local json dir
  json=$(go mod download -json "$mod@$version" 2>>"$logs/$tool.log") || fail go mod download -json "$mod@$version"
  dir=$(sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p' <<<"$json")
  [ -d "$dir" ] || fail go mod download -json "$mod@$version"
  cp "$dir/go.mod" "$work/go.mod"; chmod u+w "$work/go.mod"
  [ -f "$dir/go.sum" ] && { cp "$dir/go.sum" "$work/go.sum"; chmod u+w "$work/go.sum"; }
  # local replaces point into the release tree, which the wrapper does not have
  sed -i -E '/^replace .* => \.\.?\//d; /^\s+[^ ]+ => \.\.?\//d' "$work/go.mod"
  sed -i -E "s#^module .*#module orchbench.tools/$tool#" "$work/go.mod"
  sed -i -E '/^toolchain /d' "$work/go.mod"
  printf '\nrequire %s %s\n' "$mod" "$version" >>"$work/go.mod"
}

nomad_wrapper() {
  wrapper github.com/hashicorp/nomad "$NOMAD_VERSION"
  printf 'require github.com/hashicorp/nomad/api %s\n' "$NOMAD_API_VERSION" >>"$work/go.mod"
}
build_nomad() {
  tool=nomad
  # a UI build of the same version (target nomad-ui) is a nomad too: keep it
  if [ "$(cat "$bin/.nomad.version" 2>/dev/null)" = "$NOMAD_VERSION+ui" ] && [ -x "$bin/nomad" ]; then
    say "nomad $NOMAD_VERSION: ok (the build with the web UI; rm .tools/bin/.nomad.version for the plain one)"
    return
  fi
  installed nomad "$NOMAD_VERSION" nomad && { say "nomad $NOMAD_VERSION: ok"; return; }
  nomad_wrapper
  (cd "$work" && run "go build (several minutes cold)" go build -trimpath -o "$bin/nomad" github.com/hashicorp/nomad)
  finish nomad "$NOMAD_VERSION" nomad
  say "nomad $NOMAD_VERSION: built"
}
# Nomad with its web UI (target nomad-ui, the default; target nomad builds it
# without). Every nomad command prints a link to the UI. The release module already holds
# the built UI: command/agent/bindata_assetfs.go, go-bindata of the Ember app's
# ui/dist, compiled in by the `ui` build tag (the Makefile's ember-dist and
# static-assets steps make it; the release commits it). So the UI build is the plain
# build with -tags ui and needs no Node.js. Rebuilding the dist from ui/ cannot work
# here: the npm registry this project reaches does not serve versions that the
# release's pnpm-lock.yaml and ui/package.json pin (@hashicorp/design-system-components
# 4.13.0, @hashicorp/flight-icons 3.12.0), and one dev dependency is a GitHub tarball.
# It replaces .tools/bin/nomad, stamped $NOMAD_VERSION+ui, which build_nomad accepts
# (so a later default `cluster/tools.sh` keeps it), and is cached apart as
# nomad-ui-$NOMAD_VERSION. `cluster/nomad-ui-check.sh ADDR` checks an agent's UI.
build_nomad_ui() {
  tool=nomad-ui
  local version="$NOMAD_VERSION+ui" cached="$cache/nomad-ui-$NOMAD_VERSION"
  if [ "$(cat "$bin/.nomad.version" 2>/dev/null)" = "$version" ] && [ -x "$bin/nomad" ]; then
    say "nomad-ui $version: ok"
    return
  fi
  if [ -x "$cached/nomad" ]; then
    install_bin "$cached/nomad" "$bin/nomad"
    echo "$version" >"$bin/.nomad.version"
    say "nomad-ui $version: restored from cache"
    return
  fi
  nomad_wrapper
  step="find the built UI in the module"
  local assets
  assets="$(go env GOMODCACHE)/github.com/hashicorp/nomad@$NOMAD_VERSION/command/agent/bindata_assetfs.go"
  grep -q '^// +build ui$' "$assets" 2>/dev/null && grep -q '^// ui/dist/index.html$' "$assets" \
    || fail "no go-bindata of ui/dist with the ui build tag at $assets"
  # the binary goes to the cache first, so an interrupted build leaves .tools/bin/nomad as it was
  mkdir -p "$cached"
  (cd "$work" && run "go build -tags ui (several minutes cold)" go build -trimpath -tags ui -o "$cached/nomad.tmp" github.com/hashicorp/nomad)
  step="check the build tags"
  output_has '-tags=ui$' go version -m "$cached/nomad.tmp" || fail go version -m "$cached/nomad.tmp"
  mv "$cached/nomad.tmp" "$cached/nomad"
  install_bin "$cached/nomad" "$bin/nomad"
  echo "$version" >"$bin/.nomad.version"
  say "nomad-ui $version: built"
}
build_consul() {
  tool=consul
  installed consul "$CONSUL_VERSION" consul && { say "consul $CONSUL_VERSION: ok"; return; }
  wrapper github.com/hashicorp/consul "$CONSUL_VERSION"
  (cd "$work" && run "go build (several minutes cold)" go build -trimpath -o "$bin/consul" github.com/hashicorp/consul)
  finish consul "$CONSUL_VERSION" consul
  say "consul $CONSUL_VERSION: built"
}
build_levant() {
  tool=levant
  installed levant "$LEVANT_VERSION" levant && { say "levant $LEVANT_VERSION: ok"; return; }
  wrapper github.com/hashicorp/levant "$LEVANT_VERSION"
  (cd "$work" && run "go build" go build -trimpath -o "$bin/levant" github.com/hashicorp/levant)
  finish levant "$LEVANT_VERSION" levant
  say "levant $LEVANT_VERSION: built"
}
build_hashiup() {
  tool=hashi-up
  installed hashi-up "$HASHIUP_VERSION" hashi-up && { say "hashi-up $HASHIUP_VERSION: ok"; return; }
  wrapper github.com/jsiebens/hashi-up "$HASHIUP_VERSION"
  (cd "$work" && run "go build" go build -trimpath -o "$bin/hashi-up" github.com/jsiebens/hashi-up)
  finish hashi-up "$HASHIUP_VERSION" hashi-up
  say "hashi-up $HASHIUP_VERSION: built"
}
build_victoriametrics() {
  tool=victoriametrics
  installed victoriametrics "$VICTORIAMETRICS_VERSION" victoria-metrics vmagent && { say "victoriametrics $VICTORIAMETRICS_VERSION: ok"; return; }
  wrapper github.com/VictoriaMetrics/VictoriaMetrics "$VICTORIAMETRICS_VERSION"
  (cd "$work" && CGO_ENABLED=0 run "go build victoria-metrics" go build -trimpath -o "$bin/victoria-metrics" github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics)
  (cd "$work" && CGO_ENABLED=0 run "go build vmagent" go build -trimpath -o "$bin/vmagent" github.com/VictoriaMetrics/VictoriaMetrics/app/vmagent)
  finish victoriametrics "$VICTORIAMETRICS_VERSION" victoria-metrics vmagent
  say "victoriametrics $VICTORIAMETRICS_VERSION: built"
}

build_victorialogs() {
  tool=victorialogs
  installed victorialogs "$VICTORIALOGS_VERSION" victoria-logs && { say "victorialogs $VICTORIALOGS_VERSION: ok"; return; }
  wrapper github.com/VictoriaMetrics/VictoriaLogs "$VICTORIALOGS_VERSION"
  (cd "$work" && CGO_ENABLED=0 run "go build victoria-logs" go build -trimpath -o "$bin/victoria-logs" github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs)
  finish victorialogs "$VICTORIALOGS_VERSION" victoria-logs
  say "victorialogs $VICTORIALOGS_VERSION: built"
}

# The node shipping agent: the collector builder generates a main module from
# cluster/otelcol/builder.yaml (which includes our nomadattrs processor by local
# path), then go builds it. --skip-get-modules: the builder's `go mod tidy` and
# version checks would need module listings the proxy refuses; go build -mod=mod
# resolves everything from the exact versions in the components' go.mod files.
# Cached by version plus a hash of the build inputs, so editing the manifest or
# nomadattrs rebuilds (agent.yaml, smoke.sh and the README do not).
otelcol_key() {
  local h
  h=$(cd "$root/cluster/otelcol" && find builder.yaml nomadattrs -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-12)
  echo "$OTELCOL_VERSION-$h"
}
build_otelcol() {
  tool=otelcol
  local key src="$root/cluster/otelcol"; key=$(otelcol_key)
  installed otelcol "$key" otelcol-orchbench && { say "otelcol $key: ok"; return; }
  # every component must be at the pinned version: a stray one would pull a
  # second copy of the core modules and fail late with an obscure type error
  local stray
  stray=$(grep -nE '^\s*- gomod: ' "$src/builder.yaml" | grep -vE "(opentelemetry-collector-contrib/.* $OTELCOL_CONTRIB_VERSION|go\.opentelemetry\.io/collector/.* ($OTELCOL_VERSION|$OTELCOL_STABLE_VERSION)|cluster/otelcol/nomadattrs v0\.0\.0)\$" || true)
  if [ -n "$stray" ]; then
    step="check cluster/otelcol/builder.yaml"
    say "cluster/otelcol/builder.yaml: components not at OTELCOL_VERSION=$OTELCOL_VERSION / OTELCOL_STABLE_VERSION=$OTELCOL_STABLE_VERSION / OTELCOL_CONTRIB_VERSION=$OTELCOL_CONTRIB_VERSION (cluster/versions.env):"
    printf '    line %s\n' "$stray"
    exit 1
  fi
  wrapper go.opentelemetry.io/collector/cmd/builder "$OTELCOL_VERSION"
  (cd "$work" && CGO_ENABLED=0 run "go build the collector builder" go build -trimpath -o "$work/ocb" go.opentelemetry.io/collector/cmd/builder)
  mkdir -p "$work/src"
  cp -r "$src/builder.yaml" "$src/nomadattrs" "$work/src/"
  (cd "$work/src" && run "generate the collector sources" "$work/ocb" --config builder.yaml --skip-get-modules --skip-compilation)
  (cd "$work/src/dist" && CGO_ENABLED=0 run "go build otelcol-orchbench (a few minutes cold)" go build -trimpath -ldflags="-s -w" -o "$bin/otelcol-orchbench" .)
  finish otelcol "$key" otelcol-orchbench
  say "otelcol $key: built"
}

# Kubernetes' go.mod points its staging modules (k8s.io/api, client-go, ...) at
# ./staging with version v0.0.0; outside the release tree they are the published
# v0.MINOR.PATCH of the same release.
kubernetes_wrapper() {
  wrapper k8s.io/kubernetes "$KUBERNETES_VERSION"
  local staging="v0.${KUBERNETES_VERSION#v1.}"
  sed -i -E "s#^(\s+k8s\.io/[a-z0-9-]+) v0\.0\.0\$#\1 $staging#" "$work/go.mod"
  sed -i -E '/^godebug /d' "$work/go.mod"
}
build_kubernetes() {
  tool=kubernetes
  local bins=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)
  installed kubernetes "$KUBERNETES_VERSION" "${bins[@]}" && { say "kubernetes $KUBERNETES_VERSION: ok"; return; }
  kubernetes_wrapper
  local minor=${KUBERNETES_VERSION#v1.}; minor=${minor%%.*}
  # the version stamps a release build sets, so the node and `kubectl version` report it
  local ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
  (cd "$work" && run "go mod download" go mod download k8s.io/kubernetes)
  # one invocation: the packages the binaries share compile once, and they link in parallel
  local pkgs=(); for b in "${bins[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
  (cd "$work" && CGO_ENABLED=0 run "go build ${bins[*]} (10-15 minutes cold)" go build -trimpath -ldflags="$ldflags" -o "$bin/" "${pkgs[@]}")
  finish kubernetes "$KUBERNETES_VERSION" "${bins[@]}"
  say "kubernetes $KUBERNETES_VERSION: built"
}
build_coredns() {
  tool=coredns
  installed coredns "$COREDNS_VERSION" coredns && { say "coredns $COREDNS_VERSION: ok"; return; }
  wrapper github.com/coredns/coredns "$COREDNS_VERSION"
  (cd "$work" && CGO_ENABLED=0 run "go build" go build -trimpath -ldflags="-s -w" -o "$bin/coredns" github.com/coredns/coredns)
  finish coredns "$COREDNS_VERSION" coredns
  say "coredns $COREDNS_VERSION: built"
}

# The Nomad Autoscaler (issue 29): its builtin plugins (the Nomad target, the
# Prometheus APM that reads VictoriaMetrics, the target-value strategy) are
# compiled in, so the one binary is the whole autoscaler.
build_nomad_autoscaler() {
  tool=nomad-autoscaler
  installed nomad-autoscaler "$NOMAD_AUTOSCALER_VERSION" nomad-autoscaler && { say "nomad-autoscaler $NOMAD_AUTOSCALER_VERSION: ok"; return; }
  wrapper github.com/hashicorp/nomad-autoscaler "$NOMAD_AUTOSCALER_VERSION"
  (cd "$work" && CGO_ENABLED=0 run "go build (a few minutes cold)" go build -trimpath -ldflags="-s -w" -o "$bin/nomad-autoscaler" github.com/hashicorp/nomad-autoscaler)
  finish nomad-autoscaler "$NOMAD_AUTOSCALER_VERSION" nomad-autoscaler
  say "nomad-autoscaler $NOMAD_AUTOSCALER_VERSION: built"
}
# metrics-server (issue 29): the resource metrics API the HorizontalPodAutoscaler
# reads pods' CPU from, served through the embedded API server's aggregation layer.
build_metrics_server() {
  tool=metrics-server
  installed metrics-server "$METRICS_SERVER_VERSION" metrics-server && { say "metrics-server $METRICS_SERVER_VERSION: ok"; return; }
  wrapper sigs.k8s.io/metrics-server "$METRICS_SERVER_VERSION"
  (cd "$work" && CGO_ENABLED=0 run "go build" go build -trimpath -ldflags="-s -w" -o "$bin/metrics-server" sigs.k8s.io/metrics-server/cmd/metrics-server)
  finish metrics-server "$METRICS_SERVER_VERSION" metrics-server
  say "metrics-server $METRICS_SERVER_VERSION: built"
}

build_fortio() {
  tool=fortio
  installed fortio "$FORTIO_VERSION" fortio && { say "fortio $FORTIO_VERSION: ok"; return; }
  wrapper fortio.org/fortio "$FORTIO_VERSION"
  # static, so the load-runner image can be FROM scratch
  (cd "$work" && CGO_ENABLED=0 run "go build" go build -trimpath -ldflags="-s -w" -o "$bin/fortio" fortio.org/fortio)
  finish fortio "$FORTIO_VERSION" fortio
  say "fortio $FORTIO_VERSION: built"
}

# The image registry the emulated nodes pull from (cluster/nodes.sh runs it on
# the client node). Static, so it runs inside a node whatever its libc.
build_registry() {
  tool=registry
  installed registry "$REGISTRY_VERSION" registry && { say "registry $REGISTRY_VERSION: ok"; return; }
  wrapper github.com/distribution/distribution/v3 "$REGISTRY_VERSION"
  (cd "$work" && CGO_ENABLED=0 run "go build" go build -trimpath -ldflags="-s -w" -o "$bin/registry" github.com/distribution/distribution/v3/cmd/registry)
  finish registry "$REGISTRY_VERSION" registry
  say "registry $REGISTRY_VERSION: built"
}

# JMeter (study 004's load tool) for --load-runner local: .tools/bin/jmeter
# links to the launcher of the home cluster/images/jmeter/home.sh assembles
# from Maven Central, the one the jmeter image runs.
install_jmeter() {
  tool=jmeter step="cluster/images/jmeter/home.sh"
  local home; home=$("$root/cluster/images/jmeter/home.sh") || fail cluster/images/jmeter/home.sh
  ln -sfn "$home/bin/jmeter" "$bin/jmeter"
  say "jmeter: $bin/jmeter -> $home/bin/jmeter"
}

# Study 000's Riwai and Raupi under the exec driver: their pinned npm and PyPI
# packages, vendored by cluster/vendor.sh (cached by lock-file hash) and
# copied under /usr/local/lib/orchbench, inside the exec chroot's /usr.
install_apps() {
  tool=apps step="vendor riwai raupi"
  "$root/cluster/vendor.sh" install riwai raupi 2>&1 | sed 's/^/[tools] /' || fail cluster/vendor.sh install riwai raupi
}

start=$(date +%s)
targets=("$@"); [ ${#targets[@]} -eq 0 ] && targets=(apt victoriametrics victorialogs otelcol levant hashi-up consul nomad-ui nomad-autoscaler fortio registry apps)
for t in "${targets[@]}"; do
  case $t in
    apt) apt_install ;;
    nomad) build_nomad ;;
    nomad-ui) build_nomad_ui ;;
    consul) build_consul ;;
    levant) build_levant ;;
    hashi-up) build_hashiup ;;
    victoriametrics) build_victoriametrics ;;
    victorialogs) build_victorialogs ;;
    otelcol) build_otelcol ;;
    kubernetes) build_kubernetes ;;
    coredns) build_coredns ;;
    fortio) build_fortio ;;
    nomad-autoscaler) build_nomad_autoscaler ;;
    metrics-server) build_metrics_server ;;
    jmeter) install_jmeter ;;
    registry) build_registry ;;
    apps) install_apps ;;
    *) say "unknown tool '$t' (known: apt nomad nomad-ui consul levant hashi-up victoriametrics victorialogs otelcol kubernetes coredns fortio nomad-autoscaler metrics-server jmeter registry apps)"; exit 2 ;;
  esac
done
say "all tools ready in $(( $(date +%s) - start )) s"
