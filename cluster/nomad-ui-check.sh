#!/usr/bin/env bash
# Checks that a Nomad agent serves its web UI and that the UI renders, the way a
# person would see it: the /ui/ index must be the Ember app (not the "make dev-ui"
# stub of a binary built without the UI), and headless Chromium must render the
# jobs page, with the nav and the jobs list read from the agent's API.
#
# usage: cluster/nomad-ui-check.sh [ADDR] [JOB...]
#   ADDR  the agent's HTTP address (default $NOMAD_ADDR, else http://127.0.0.1:4646)
#   JOB   job names the rendered jobs list must show (optional)
# NOMAD_UI_SCREENSHOT=FILE.png saves a screenshot of the rendered jobs page.
# Prints what it found and exits 0 only when every check passed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
addr=${1:-${NOMAD_ADDR:-http://127.0.0.1:4646}}
addr=${addr%/}
shift || true
wait_s=${NOMAD_UI_CHECK_SECONDS:-45}

say() { printf '[nomad-ui-check] %s\n' "$*"; }
fail() { say "FAIL: $*"; exit 1; }

for cmd in curl node chromium; do
  command -v "$cmd" >/dev/null || fail "$cmd is not installed (cluster/tools.sh apt installs it)"
done

# 1. the index: the Ember app's page, not the stub
index=$(curl -fsS -m 10 "$addr/ui/") || fail "GET $addr/ui/ failed: is a Nomad agent listening at $addr?"
if grep -q 'Nomad UI is not available in this binary' <<<"$index"; then
  fail "GET $addr/ui/ returned the no-UI stub: this nomad was built without -tags ui (build it with: cluster/tools.sh nomad-ui)"
fi
grep -q 'name="nomad-ui/config/environment"' <<<"$index" \
  || fail "GET $addr/ui/ is not the Ember index (no nomad-ui/config/environment meta); first bytes: $(head -c 200 <<<"$index")"
scripts=$(grep -o '/ui/assets/[^"]*\.js' <<<"$index" | wc -l)
say "GET $addr/ui/: the Ember index ($(wc -c <<<"$index") bytes, $scripts script assets)"

# 2. the rendered jobs page, which must agree with the API: the empty state also
# shows while the UI's job query is out (or when it failed), so with jobs
# registered the page must list some, and only those
api_jobs=$(curl -fsS -m 10 "$addr/v1/jobs?namespace=*") || fail "GET $addr/v1/jobs failed"
n_api=$(node -e 'console.log(JSON.parse(process.argv[1]).length)' "$api_jobs")
out=$(NOMAD_UI_EXPECT_JOBS=$n_api node --experimental-websocket "$root/cluster/nomad-ui-render.mjs" "$addr/ui/jobs" "$wait_s") \
  || fail "headless Chromium did not render $addr/ui/jobs (the API lists $n_api jobs): $out"
say "rendered $addr/ui/jobs: $out"
verdict=$(node -e '
  const [r, api] = [JSON.parse(process.argv[1]), JSON.parse(process.argv[2]).map((j) => j.Name)];
  const stray = r.jobs.filter((j) => !api.includes(j));
  if (stray.length) { console.log(`shows jobs the API does not have: ${stray.join(", ")}`); process.exit(1); }
  if (api.length && !r.jobs.length) { console.log(`shows no job while the API has ${api.length}`); process.exit(1); }
  console.log(`shows ${r.jobs.length} of the ${api.length} jobs the API lists`);
' "$out" "$api_jobs") || fail "the rendered jobs list disagrees with $addr/v1/jobs: $verdict"
say "$verdict"
for job in "$@"; do
  node -e 'const r = JSON.parse(process.argv[1]); process.exit(r.jobs.includes(process.argv[2]) ? 0 : 1)' "$out" "$job" \
    || fail "the rendered jobs list does not show job '$job'"
  say "the jobs list shows '$job'"
done
say "ok"
