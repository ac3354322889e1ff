#!/usr/bin/env bash
# What the embedded cluster adds to the host outside its own processes:
# network links, iptables chains and rules, mounts, network namespaces, and
# top-level cgroups. cluster-up records the host as it found it; cluster-down
# removes what the cluster added since (only of the kinds Nomad's CNI plugins,
# Nomad, dockerd and the kubelet create), and the integration tests check that
# nothing is left.
#   hoststate.sh snapshot DIR              record the host now
#   hoststate.sh clean DIR [--docker]      remove what Nomad (and with --docker, dockerd) added since DIR
#   hoststate.sh clean-cgroups REGEX [DIR] remove the top-level cgroups named REGEX (new since DIR, when given)
#   hoststate.sh diff DIR                  print what is new since DIR, one item a line; empty when nothing
set -euo pipefail
# comm needs both sides sorted the same way
export LC_ALL=C
root=$(cd "$(dirname "$0")/.." && pwd)
state="$root/.state"
say() { printf '[cluster] %s\n' "$*"; }

tables="filter nat mangle raw"

# Each lister prints one item a line and never fails: an empty table or a
# missing directory is an empty list.
links() { { ip -o link 2>/dev/null || true; } | awk -F': ' '{print $2}' | sed 's/@.*//' | sort -u; }
chains() { for t in $tables; do { iptables-save -t "$t" 2>/dev/null || true; } | sed -n "s/^:\([^ ]*\) .*/$t \1/p"; done | sort -u; }
# iptables-save without -c prints no counters, so a rule that only saw traffic is the same rule
rules() { for t in $tables; do { iptables-save -t "$t" 2>/dev/null || true; } | sed -n "s/^-A /$t -A /p"; done | sort -u; }
mounts() { awk '{print $2}' /proc/mounts | sort -u; }
netns() {
  { ip netns list 2>/dev/null || true; } | awk '{print "netns " $1}'
  { ls /run/docker/netns 2>/dev/null || true; } | sed 's|^|docker-netns |'
}
# The top-level cgroups of every cgroup hierarchy mounted: the kubelet
# (kubepods), Nomad (nomad) and dockerd (docker) make theirs there and leave
# them behind when they stop. Only the top level: deeper cgroups come and go
# with the host's own services, and a leftover of ours sits in one of these.
cgroups() {
  local m
  { awk '$3 == "cgroup" || $3 == "cgroup2" {print $2}' /proc/mounts 2>/dev/null || true; } | sort -u | while read -r m; do
    find "$m" -mindepth 1 -maxdepth 1 -type d 2>/dev/null || true
  done | sort -u
}

snapshot() {
  local dir=$1
  mkdir -p "$dir"
  links >"$dir/links"; chains >"$dir/chains"; rules >"$dir/rules"; mounts >"$dir/mounts"; netns | sort -u >"$dir/netns"
  cgroups >"$dir/cgroups"
}

# added KIND DIR: the items of KIND present now and absent from the snapshot
added() { comm -13 "$2/$1" <($1 | sort -u); }

diff_host() {
  local dir=$1 kind
  for kind in links chains rules mounts netns cgroups; do
    [ -f "$dir/$kind" ] || continue
    added "$kind" "$dir" | sed "s/^/$kind: /"
  done
}

clean() {
  local dir=$1 docker=${2:-}
  [ -f "$dir/links" ] || { say "no record of the host before cluster-up ($dir): nothing to compare, nothing removed"; return 0; }
  local own='CNI|NOMAD|nomad'
  [ "$docker" = "--docker" ] && own="$own|DOCKER|docker"
  local m
  # mounts first: a netns mount holds its namespace, an alloc's tmpfs its directory
  added mounts "$dir" | sort -r | while read -r m; do
    case "$m" in
      "$state"/*|/run/docker/*|/var/run/docker/*|/var/lib/docker/*)
        if [ "$docker" = "--docker" ] || [[ "$m" == "$state"/* ]]; then umount -l "$m" 2>/dev/null || true; fi ;;
    esac
  done
  if [ "$docker" = "--docker" ]; then
    added netns "$dir" | sed -n 's/^docker-netns //p' | while read -r n; do umount -l "/run/docker/netns/$n" 2>/dev/null || true; rm -f "/run/docker/netns/$n"; done
  fi
  # rules in chains that stay (FORWARD, POSTROUTING, ...) jump to the chains
  # that go, so they go first; iptables-save quotes its output for a shell
  local t line
  added rules "$dir" | { grep -E "$own" || true; } | while read -r t line; do
    eval "iptables -t $t ${line/#-A /-D }" 2>/dev/null || true
  done
  local gone; gone=$(added chains "$dir" | grep -E " ($own)" || true)
  while read -r t c; do [ -n "${t:-}" ] && iptables -t "$t" -F "$c" 2>/dev/null || true; done <<<"$gone"
  while read -r t c; do [ -n "${t:-}" ] && iptables -t "$t" -X "$c" 2>/dev/null || true; done <<<"$gone"
  local pattern='^(nomad|veth.*)$'
  [ "$docker" = "--docker" ] && pattern='^(nomad|veth.*|docker0|docker_gwbridge|br-.*)$'
  added links "$dir" | { grep -E "$pattern" || true; } | while read -r l; do ip link delete "$l" 2>/dev/null || true; done
  # the agents are stopped, so their cgroups empty out
  local groups='^nomad(\.slice)?$'
  [ "$docker" = "--docker" ] && groups='^(nomad(\.slice)?|docker)$'
  clean_cgroups "$groups" "$dir"
  local left; left=$(diff_host "$dir")
  if [ -n "$left" ]; then
    say "left on the host since cluster-up (not made by Nomad or dockerd, or not removable):"
    printf '%s\n' "$left" | sed 's/^/    /'
  fi
}

# clean_cgroups REGEX [DIR]: removes the top-level cgroups whose name matches
# REGEX (only those new since DIR, when given), with everything inside them.
# rmdir takes only a cgroup without children or processes, so the deepest go
# first, and the whole is tried again for a few seconds while processes that
# were just killed exit. A cgroup a process still holds is reported, not
# emptied: that process is a leak the caller must see.
clean_cgroups() {
  local regex=$1 dir=${2:-} cg left=() still
  if [ -n "$dir" ]; then
    [ -f "$dir/cgroups" ] || return 0
    while read -r cg; do if [[ ${cg##*/} =~ $regex ]]; then left+=("$cg"); fi; done < <(added cgroups "$dir")
  else
    while read -r cg; do if [[ ${cg##*/} =~ $regex ]]; then left+=("$cg"); fi; done < <(cgroups)
  fi
  local found=${#left[@]}
  [ "$found" -gt 0 ] || return 0
  for _ in $(seq 1 20); do
    find "${left[@]}" -depth -type d -exec rmdir {} + 2>/dev/null || true
    still=(); for cg in "${left[@]}"; do if [ -d "$cg" ]; then still+=("$cg"); fi; done
    left=("${still[@]}")
    if [ ${#left[@]} -eq 0 ]; then say "removed $found cgroups named $regex"; return 0; fi
    sleep 0.25
  done
  local procs; procs=$(find "${left[@]}" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -un | paste -sd' ')
  say "cgroups not removable: ${left[*]} (processes in them: ${procs:-none})"
}

case "${1:-}" in
  snapshot) snapshot "$2" ;;
  clean) clean "$2" "${3:-}" ;;
  clean-cgroups) clean_cgroups "$2" "${3:-}" ;;
  diff) diff_host "$2" ;;
  *) echo "usage: $0 snapshot DIR | clean DIR [--docker] | clean-cgroups REGEX [DIR] | diff DIR" >&2; exit 2 ;;
esac
