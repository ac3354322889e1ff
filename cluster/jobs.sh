#!/usr/bin/env bash
# The cluster's infrastructure jobs are levant templates (jobs/*.nomad.tpl) with
# one variable file (jobs/cluster.vars.yml); this script renders and deploys
# them with the pinned levant.
#   jobs.sh render [NAME...]   write .state/jobs/NAME.nomad.hcl (all templates by default);
#                              `nomad job run` takes the rendered file as it is
#   jobs.sh deploy NAME...     render, then `levant deploy` each and wait for it
# Extra levant variables: `root` (this checkout), `versions.*` (cluster/versions.env)
# `node_probe_binary` (NODE_PROBE_BIN, default .tools/bin/orchbench: the
# node probe's program, a path on the nodes) and `node_probe_sum`
# (NODE_PROBE_SUM, default the checksum of .tools/bin/orchbench).
# JOBS_VAR_FILE, when set, is one more variable file, read last: a remote
# cluster's (orchbench remote up) datacenter, probe token and `remote`
# block; JOBS_ROOT (default this checkout) is `root`, where the jobs' hosts
# hold the programs (/opt/orchbench on a remote cluster's); JOBS_OUT (default
# .state/jobs) where the rendered files go.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/.tools/bin"
out="${JOBS_OUT:-$root/.state/jobs}"
say() { printf '[jobs] %s\n' "$*"; }
die() { say "$*"; exit 1; }
# shellcheck source=versions.env
source "$root/cluster/versions.env"

[ -x "$bin/levant" ] || die "$bin/levant is missing: run ./justw tools first"
mkdir -p "$out"

versions_file() {
  cat >"$out/versions.yml" <<YML
# written by cluster/jobs.sh from cluster/versions.env
versions:
  nomad: $NOMAD_VERSION
  victoriametrics: $VICTORIAMETRICS_VERSION
  victorialogs: $VICTORIALOGS_VERSION
  otelcol: ${OTELCOL_VERSION:-unset}
  nomad_autoscaler: ${NOMAD_AUTOSCALER_VERSION:-unset}
YML
}

# the variables every levant call takes: the file, the versions, the checkout
# the probe's job carries its binary's checksum, so that a new binary is a
# new job version and its allocations restart with it
probe_sum=${NODE_PROBE_SUM:-$( { sha256sum "$bin/orchbench" 2>/dev/null || echo none; } | cut -c1-12)}
levant_vars=(-var-file="$root/jobs/cluster.vars.yml" -var-file="$out/versions.yml" -var "root=${JOBS_ROOT:-$root}"
  -var "node_probe_binary=${NODE_PROBE_BIN:-$bin/orchbench}" -var "node_probe_sum=$probe_sum")
[ -z "${JOBS_VAR_FILE:-}" ] || levant_vars+=(-var-file="$JOBS_VAR_FILE")

render() { # render NAME: .state/jobs/NAME.nomad.hcl
  local name=$1 tpl="$root/jobs/$1.nomad.tpl"
  [ -f "$tpl" ] || die "no template jobs/$name.nomad.tpl (templates: $(cd "$root/jobs" && ls ./*.nomad.tpl | sed 's#^\./##; s#\.nomad\.tpl$##' | paste -sd' '))"
  "$bin/levant" render -log-level=WARN "${levant_vars[@]}" -out="$out/$name.nomad.hcl" "$tpl" >"$out/$name.render.log" 2>&1 \
    || die "step 'render jobs/$name.nomad.tpl' failed: $(tail -n 3 "$out/$name.render.log")"
}

deploy() { # deploy NAME: registers the rendered job and waits for levant's verdict
  local name=$1
  render "$name"
  say "deploying $name (.state/jobs/$name.nomad.hcl)"
  "$bin/levant" deploy -log-level=WARN -ignore-no-changes -address="${NOMAD_ADDR:-http://127.0.0.1:4646}" \
    "${levant_vars[@]}" "$root/jobs/$name.nomad.tpl" >"$out/$name.deploy.log" 2>&1 \
    || die "step 'deploy $name' failed (levant, .state/jobs/$name.deploy.log): $(tail -n 5 "$out/$name.deploy.log")"
}

cmd=${1:-}; shift || true
versions_file
case "$cmd" in
  render)
    names=("$@")
    if [ ${#names[@]} -eq 0 ]; then
      for t in "$root"/jobs/*.nomad.tpl; do names+=("$(basename "$t" .nomad.tpl)"); done
    fi
    for n in "${names[@]}"; do render "$n"; say "rendered .state/jobs/$n.nomad.hcl"; done ;;
  deploy)
    [ $# -gt 0 ] || die "usage: $0 deploy NAME..."
    for n in "$@"; do deploy "$n"; done ;;
  *) echo "usage: $0 render [NAME...] | deploy NAME..." >&2; exit 2 ;;
esac
