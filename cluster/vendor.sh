#!/usr/bin/env bash
# Vendors an app's third-party packages from their registries with their own
# clients, pinned by the app's lock file, and caches the result by the lock
# file's hash under ${ORCHBENCH_CACHE:-~/.cache/orchbench}/vendor:
#   riwai  npm ci of apps/riwai/package-lock.json       -> <dir>/node_modules
#   frontier  npm ci of apps/frontier/package-lock.json -> <dir>/node_modules
#   raupi  pip install --require-hashes of requirements -> <dir>/site
#   artillery  npm ci of cluster/images/artillery/package-lock.json (a
#          load tool's tree, which cluster/images.sh puts in its image)
#   voting pip install --require-hashes of requirements -> <dir>/site
# `cluster/vendor.sh dir APP` prints the cached directory (vendoring first);
# cluster/images.sh COPYs it into the image. `cluster/vendor.sh install APP`
# copies it to /usr/local/lib/orchbench/APP, which the exec driver's chroot
# maps from the host (cluster/embedded.sh): the same bytes in both drivers.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache="${ORCHBENCH_CACHE:-$HOME/.cache/orchbench}/vendor"
say() { printf '[vendor] %s\n' "$*" >&2; }
# The exec driver's copy; packs/<app> default to it (variable vendor_dir).
host_prefix=/usr/local/lib/orchbench

lock_files() {
  case $1 in
    riwai|frontier) echo "apps/$1/package.json apps/$1/package-lock.json" ;;
    artillery) echo cluster/images/artillery/package.json cluster/images/artillery/package-lock.json ;;
    raupi) echo apps/raupi/requirements.txt ;;
    voting) echo apps/voting/requirements.txt ;;
    *) say "unknown app '$1' (known: riwai frontier raupi voting artillery)"; exit 2 ;;
  esac
}

vendored_dir() {
  local app=$1 files hash
  files=$(lock_files "$app")
  # shellcheck disable=SC2086
  hash=$(cd "$root" && cat $files | sha256sum | cut -c1-12)
  echo "$cache/$app-$hash"
}

vendor() {
  local app=$1 dir tmp log
  dir=$(vendored_dir "$app")
  [ -f "$dir/.complete" ] && { echo "$dir"; return; }
  mkdir -p "$cache"; tmp=$(mktemp -d "$cache/.$app.XXXXXX"); log="$tmp.log"
  case $app in
    riwai|frontier|artillery)
      command -v npm >/dev/null || { say "npm is missing (Debian's nodejs has none): apt-get install npm"; exit 1; }
      local manifest lock
      read -r manifest lock <<<"$(lock_files "$app")"
      cp "$root/$manifest" "$root/$lock" "$tmp/"
      say "$app: npm ci (pinned by $lock)"
      (cd "$tmp" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund) >"$log" 2>&1 || { cat "$log" >&2; rm -rf "$tmp"; exit 1; }
      rm "$tmp/package.json" "$tmp/package-lock.json" ;;
    raupi|voting)
      # Debian's python3 on purpose: the image's python3 is the same bookworm
      # 3.11, so the wheels and the precompiled bytecode fit both
      say "$app: pip install --require-hashes -r apps/$app/requirements.txt"
      /usr/bin/python3 -m pip install --quiet --no-deps --require-hashes --only-binary=:all: --no-warn-script-location \
        --target "$tmp/site" -r "$root/apps/$app/requirements.txt" >"$log" 2>&1 || { cat "$log" >&2; rm -rf "$tmp"; exit 1; }
      rm -rf "$tmp/site/bin" ;;
  esac
  rm -f "$log"; touch "$tmp/.complete"
  rm -rf "$dir"; mv "$tmp" "$dir"
  say "$app: vendored into $dir"
  echo "$dir"
}

install_host() {
  local app=$1 src dst=$host_prefix/$1
  src=$(vendor "$app")
  if [ -f "$dst/.source" ] && [ "$(cat "$dst/.source")" = "$src" ]; then say "$app: $dst is up to date"; return; fi
  [ -w "$(dirname "$host_prefix")" ] || { say "$app: cannot write $host_prefix; run as root"; exit 1; }
  rm -rf "$dst.new"; mkdir -p "$host_prefix"
  cp -a "$src" "$dst.new"; chmod -R a+rX "$dst.new"; echo "$src" >"$dst.new/.source"
  rm -rf "$dst"; mv "$dst.new" "$dst"
  say "$app: installed for the exec driver in $dst"
}

[ $# -ge 2 ] || { echo "usage: $0 dir|install APP..." >&2; exit 2; }
cmd=$1; shift
for app in "$@"; do
  case $cmd in
    dir) vendor "$app" ;;
    install) install_host "$app" ;;
    *) echo "usage: $0 dir|install APP..." >&2; exit 2 ;;
  esac
done
