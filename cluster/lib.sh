# shellcheck shell=bash
# Functions the cluster scripts share; each script defines say() first.

# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND until it succeeds.
wait_for() {
  local limit=$1 what=$2; shift 2
  local deadline=$(( $(date +%s) + limit ))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.5
  done
  say "$what: ok"
}

# output_has PATTERN COMMAND...: true when COMMAND succeeds and a line of its
# output matches the extended regular expression PATTERN. The output is read
# whole before it is matched: in `COMMAND | grep -q PATTERN` under pipefail,
# grep exits at its first match and COMMAND, still writing, dies of SIGPIPE,
# so the pipeline fails now and then although the pattern is there.
output_has() {
  local pattern=$1 out; shift
  out=$("$@") || return 1
  grep -qE -- "$pattern" <<<"$out"
}

# stop_pidfile FILE NAME SIGNAL: stops the process FILE records with SIGNAL,
# then SIGKILL after a 10 s grace period, and removes FILE.
stop_pidfile() {
  local file=$1 name=$2 signal=$3 pid
  if ! { [ -f "$file" ] && pid=$(cat "$file") && kill -0 "$pid" 2>/dev/null; }; then
    rm -f "$file"; return 0
  fi
  say "stopping $name (pid $pid)"
  kill -"$signal" "$pid" 2>/dev/null || true
  for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$file"
}

# run_machine NAME DOCKER-RUN-ARGS...: starts a container that stands for a
# machine (an emulated node, nodes.sh; an emulated host, hosts.sh): every
# capability but CAP_SYS_RESOURCE (which this machine withholds, so
# --privileged fails), no seccomp/AppArmor and unmasked /proc, what a
# dockerd, iptables and overlay networking need inside; the cgroup tree the
# host's, writable, so that the machine's runtimes make their tasks'
# cgroups under its own.
run_machine() {
  local name=$1; shift
  docker run -d --name "$name" --hostname "$name" \
    --cap-add ALL --cap-drop SYS_RESOURCE \
    --security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined \
    --device /dev/net/tun -v /sys/fs/cgroup:/sys/fs/cgroup:rw --cgroupns host "$@"
}
