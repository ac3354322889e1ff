#!/usr/bin/env bash
# Standalone check of the node agent (agent.yaml) against real VictoriaLogs and
# VictoriaMetrics, a fake Nomad log tree and a stand-in for Nomad's allocation
# API. Needs .tools/bin/{otelcol-orchbench,victoria-logs,victoria-metrics}
# (cluster/tools.sh otelcol victorialogs victoriametrics) and python3.
#   (a) task lines are queryable in VictoriaLogs by nomad.job with every attribute;
#   (b) host metrics and the log counters are queryable in VictoriaMetrics;
#   (c) VictoriaLogs down, N lines written (across a rotation) and the agent
#       restarted meanwhile: once VictoriaLogs is back all N arrive, each once;
#   (e) two allocations writing identical lines both arrive, one unknown to Nomad;
#   (d) the agent's CPU and RSS while shipping LOAD_RATE lines/s for LOAD_SECONDS.
# RESTART_SIGNAL=KILL crashes the agent in (c) instead of stopping it.
# SMOKE_BREAK=memqueue runs (c) with the sending queue in memory instead of on
# disk: the check must then fail (the lines queued at the restart are lost).
# Every port and the work dir can be moved by environment; all loops are bounded.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${SMOKE_BIN:-$root/.tools/bin}
dir=${SMOKE_DIR:-/tmp/otelcol-smoke}
vl_port=${VL_PORT:-19428} vm_port=${VM_PORT:-18428} nomad_port=${FAKE_NOMAD_PORT:-19646}
N=${OUTAGE_LINES:-2000} load_rate=${LOAD_RATE:-1000} load_seconds=${LOAD_SECONDS:-20}
alloc=5f0e4b7a-3c2d-4e1f-8a9b-0c1d2e3f4a5b
logs="$dir/nomad/alloc/$alloc/alloc/logs"
vl="http://127.0.0.1:$vl_port" vm="http://127.0.0.1:$vm_port"

say() { printf '[smoke] %s\n' "$*"; }
die() { say "FAIL: $*"; exit 1; }
for b in otelcol-orchbench victoria-logs victoria-metrics; do
  [ -x "$bin/$b" ] || die "$bin/$b missing: run cluster/tools.sh otelcol victorialogs victoriametrics"
done

# someone else's server on a port would answer the checks instead of ours;
# the listeners are read whole, as in `ss | grep -q` under pipefail an early
# match could fail the pipeline
listening=$(ss -Hltn)
for p in "$vl_port" "$vm_port" "$nomad_port" "${OTELCOL_METRICS_PORT:-18888}" "${OTELCOL_HEALTH_PORT:-13133}"; do
  ! grep -q " 127.0.0.1:$p " <<<"$listening" || die "port $p is already in use (move it: VL_PORT VM_PORT FAKE_NOMAD_PORT OTELCOL_METRICS_PORT OTELCOL_HEALTH_PORT)"
done
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
rm -rf "$dir"; mkdir -p "$logs" "$dir/storage"

# wait_for WHAT SECONDS CMD...: polls CMD every 0.5 s until it succeeds.
wait_for() {
  local what=$1 secs=$2; shift 2
  for _ in $(seq $((secs * 2))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  die "$what not ready after ${secs}s"
}
start_vl() {
  "$bin/victoria-logs" -httpListenAddr="127.0.0.1:$vl_port" -storageDataPath="$dir/vl" -loggerLevel=WARN >>"$dir/vl.log" 2>&1 &
  vl_pid=$!; pids+=("$vl_pid")
  wait_for victoria-logs 30 curl -sf "$vl/health"
}
start_agent() {
  NOMAD_DATA_DIR="$dir/nomad" NOMAD_ADDR="http://127.0.0.1:$nomad_port" NODE_NAME=smoke-node \
  VICTORIALOGS_URL="$vl" VICTORIAMETRICS_URL="$vm" OTELCOL_STORAGE_DIR="$dir/storage" \
  OTELCOL_METRICS_HOST=127.0.0.1 OTELCOL_METRICS_PORT="${OTELCOL_METRICS_PORT:-18888}" \
  OTELCOL_HEALTH_ADDR="127.0.0.1:${OTELCOL_HEALTH_PORT:-13133}" \
    "$bin/otelcol-orchbench" --config "$agent_cfg" >>"$dir/agent.log" 2>&1 &
  agent_pid=$!; pids+=("$agent_pid")
  wait_for otelcol-orchbench 30 curl -sf "http://127.0.0.1:${OTELCOL_HEALTH_PORT:-13133}/"
}
stop() { kill -s "${2:-TERM}" "$1"; for _ in $(seq 60); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.5; done; die "pid $1 did not stop in 30s"; }
logsql() { curl -sf "$vl/select/logsql/query" --data-urlencode "query=$1"; }
vl_count() { logsql "$1 | stats count() n" | python3 -c 'import json,sys; print(json.loads(sys.stdin.read() or "{\"n\":0}")["n"])'; }
vl_has() { [ "$(vl_count "$2")" = "$1" ]; }  # vl_has N QUERY

agent_cfg="$root/cluster/otelcol/agent.yaml"
if [ "${SMOKE_BREAK:-}" = memqueue ]; then
  agent_cfg="$dir/agent-memqueue.yaml"
  grep -v '^      storage: file_storage$' "$root/cluster/otelcol/agent.yaml" >"$agent_cfg"
  say "SMOKE_BREAK=memqueue: the logs sending queue is in memory; check (c) must fail"
fi

# Stand-in for GET /v1/allocation/<id>, with the fields of Nomad's answer the agent reads.
cat >"$dir/fakenomad.py" <<EOF
import http.server, json
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path != "/v1/allocation/$alloc":
            self.send_error(404, "alloc not found"); return
        body = json.dumps({"ID": "$alloc", "Namespace": "default", "JobID": "web",
                           "TaskGroup": "frontend", "NodeName": "smoke-node", "NodeID": "n1"}).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", $nomad_port), H).serve_forever()
EOF
python3 "$dir/fakenomad.py" & pids+=($!)
# VM_PROM_NAMING=1: VictoriaMetrics as the embedded cluster runs it, turning OTLP
# names into Prometheus ones (system_cpu_time_seconds_total, label nomad_job)
vm_flags=(); [ "${VM_PROM_NAMING:-}" = 1 ] && vm_flags=(-opentelemetry.usePrometheusNaming)
"$bin/victoria-metrics" -httpListenAddr="127.0.0.1:$vm_port" -storageDataPath="$dir/vm" -loggerLevel=WARN "${vm_flags[@]}" >>"$dir/vm.log" 2>&1 & pids+=($!)
wait_for victoria-metrics 30 curl -sf "$vm/health"
wait_for fake-nomad 10 curl -sf "http://127.0.0.1:$nomad_port/v1/allocation/$alloc"
start_vl
# Nomad's log FIFOs sit next to the files; the agent must never open them.
mkfifo "$logs/.web.stdout.fifo" "$logs/.web.stderr.fifo"
start_agent

# (a) lines with every attribute
for i in $(seq 1 50); do echo "hello $i from web"; done >>"$logs/web.stdout.0"
for i in $(seq 1 5); do echo "level=ERROR something failed $i"; done >>"$logs/web.stderr.0"
wait_for "55 lines in VictoriaLogs" 30 vl_has 55 'nomad.job:"web"'
line=$(logsql 'nomad.job:"web" log.stream:"stderr" | limit 1')
say "(a) one stored line: $line"
for f in nomad.job nomad.group nomad.task nomad.alloc_id nomad.namespace nomad.node log.stream host.name _msg _stream; do
  grep -q "\"$f\":" <<<"$line" || die "(a) field $f missing from $line"
done
grep -q '"_msg":"level=ERROR something failed' <<<"$line" || die "(a) _msg is not the line's text"
grep -q '"nomad.group":"frontend"' <<<"$line" || die "(a) nomad.group is not frontend"
say "(a) ok: 55 lines, fields nomad.{job,group,task,alloc_id,namespace,node}, log.stream, host.name, _msg"

# (b) host metrics and the log counters in VictoriaMetrics
# vm_has QUERY: the query has a result; with VM_PROM_NAMING=1 the dotted label
# names in QUERY are written with underscores
vm_has() {
  local q=$1; [ "${VM_PROM_NAMING:-}" = 1 ] && q=$(sed -E 's/(host|nomad|log)\.(name|job|stream)=/\1_\2=/g' <<<"$q")
  curl -sf "$vm/internal/force_flush" >/dev/null
  local r; r=$(curl -sf "$vm/api/v1/query" --data-urlencode "query=$q") && [[ $r == *'"result":[{'* ]]
}
wait_for "system.cpu.time in VictoriaMetrics" 40 vm_has '{__name__=~"system.cpu.time.*",host.name="smoke-node"}'
wait_for "orchbench.log.errors for job web" 40 vm_has 'max({__name__=~"orchbench.log.errors.*",nomad.job="web"}) >= 5'
wait_for "orchbench.log.records for job web" 40 vm_has 'max({__name__=~"orchbench.log.records.*",nomad.job="web",log.stream="stdout"}) >= 50'
wait_for "the agent's own metrics" 40 vm_has '{__name__=~"otelcol_exporter_sent_log_records.*",host.name="smoke-node"}'
pull=$(curl -sf "http://127.0.0.1:${OTELCOL_METRICS_PORT:-18888}/metrics" | grep -c '^otelcol_exporter_sent_log_records' || true)
[ "$pull" -ge 1 ] || die "(b) the agent's Prometheus endpoint has no otelcol_exporter_sent_log_records"
say "(b) ok: $(curl -sf "$vm/api/v1/label/__name__/values" | python3 -c 'import json,sys; n=json.load(sys.stdin)["data"]; print(len(n), "metric names, e.g.", [m for m in n if m.startswith(("system.cpu","orchbench","otelcol_exporter_sent"))][:6])')"

# (c) VictoriaLogs down, N numbered lines across a rotation and an agent restart
stop "$vl_pid"
say "(c) victoria-logs stopped; writing $N numbered lines, rotating to web.stdout.1 half way"
half=$((N / 2))
for i in $(seq 1 "$half"); do echo "outage seq=$i"; done >>"$logs/web.stdout.0"
sleep 3
stop "$agent_pid" "${RESTART_SIGNAL:-TERM}"; say "(c) agent restarted (SIG${RESTART_SIGNAL:-TERM}) while victoria-logs is down"
start_agent
for i in $(seq $((half + 1)) "$N"); do echo "outage seq=$i"; done >>"$logs/web.stdout.1"
sleep 5
start_vl; say "(c) victoria-logs back"
got=0
for _ in $(seq 120); do got=$(vl_count '"outage seq="'); [ "$got" -ge "$N" ] && break; sleep 1; done
sleep 3  # anything beyond N (a duplicate) would arrive now
got=$(vl_count '"outage seq="')
uniq=$(logsql '"outage seq=" | fields _msg' | python3 -c 'import json,sys; print(len({json.loads(l)["_msg"] for l in sys.stdin if l.strip()}))')
say "(c) written $N, stored $got, distinct $uniq"
[ "$got" = "$N" ] && [ "$uniq" = "$N" ] || die "(c) lines lost or duplicated across the outage"
say "(c) ok: all $N lines arrived exactly once"

# (e) a replica writing the very same lines (the file reader tells files apart by
# content) and unknown to Nomad: both allocations arrive in full, the unknown one
# without nomad.job and with a warning in the agent's log
alloc2=6a1f5c8b-4d3e-4f20-9bac-1d2e3f4a5b6c
logs2="$dir/nomad/alloc/$alloc2/alloc/logs"; mkdir -p "$logs2"
for i in $(seq 1 30); do echo "replica tick $i" | tee -a "$logs/web.stderr.0" >>"$logs2/web.stderr.0"; sleep 0.05; done
wait_for "30 replica lines of each allocation" 30 vl_has 60 '"replica tick"'
vl_has 30 "nomad.alloc_id:\"$alloc2\" -nomad.job:* \"replica tick\"" || die "(e) the unknown allocation's lines are not all there without nomad.job"
grep -q "Nomad did not resolve the allocation.*$alloc2" "$dir/agent.log" || die "(e) no warning naming allocation $alloc2 in $dir/agent.log"
say "(e) ok: identical lines from two allocations both arrive (30 + 30); the one Nomad does not know ships without nomad.job, with a warning"

# (d) cost while shipping LOAD_RATE lines/s
ticks() { awk '{print $14 + $15}' "/proc/$agent_pid/stat"; }
t0=$(ticks); s0=$(date +%s.%N)
python3 - "$logs/web.stdout.1" "$load_rate" "$load_seconds" <<'EOF'
import sys, time
path, rate, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path, "a", buffering=1) as f:
    start = time.time()
    for s in range(secs * 10):  # ten slices a second
        for i in range(rate // 10):
            f.write(f"load slice={s} i={i} GET /api/items 200 12ms\n")
        time.sleep(max(0, start + (s + 1) / 10 - time.time()))
EOF
want=$((load_rate / 10 * 10 * load_seconds))
for _ in $(seq 60); do [ "$(vl_count '"load slice="')" -ge "$want" ] && break; sleep 1; done
t1=$(ticks); s1=$(date +%s.%N)
rss=$(awk '/VmRSS/ {print $2}' "/proc/$agent_pid/status")
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$agent_pid/status")
cpu=$(python3 -c "print(round(($t1 - $t0) / $(getconf CLK_TCK) / ($s1 - $s0) * 100, 1))")
stored=$(vl_count '"load slice="')
say "(d) $want lines at $load_rate/s: $stored stored; agent CPU ${cpu}% of one core over $(python3 -c "print(round($s1-$s0,1))") s, RSS $((rss / 1024)) MiB (peak $((hwm / 1024)) MiB)"
[ "$stored" = "$want" ] || die "(d) $stored of $want load lines stored"
say "all checks passed"
