#!/usr/bin/env bash
# Where the package registries are, read from the machine's own settings, so
# the project names no registry host and follows whatever mirror the machine
# is set up to use.
#   registries.sh goproxy              the Go module proxy list: $GOPROXY when
#                                      set, else `go env GOPROXY`, cut before its
#                                      first `direct` or `off`, since the tools are
#                                      built from the proxy only, never from
#                                      version control; `off` when no proxy is left
#   registries.sh debian-mirror SUITE  $DEBIAN_MIRROR when set, else the first
#                                      http(s) or file URI of a `deb` source of
#                                      SUITE's main component in apt's sources
set -euo pipefail

goproxy() {
  local list=${GOPROXY:-}
  # go may be missing on a machine that has not been set up: no proxy then,
  # and the Go builds say so (cluster/tools.sh)
  [ -n "$list" ] || list=$(go env GOPROXY 2>/dev/null) || list=""
  # Go walks the list in order and never past `direct` or `off`, so the
  # entries before the first of them are the proxies it would ask; a `,` or
  # `|` after an entry says when Go moves on to the next, and is kept
  local kept="" sep="" entry next
  while [[ $list =~ ^([^,|]*)([,|]?)(.*)$ ]]; do
    entry=${BASH_REMATCH[1]} next=${BASH_REMATCH[2]} list=${BASH_REMATCH[3]}
    case $entry in direct|off) break ;; esac
    if [ -n "$entry" ]; then kept+="$sep$entry"; sep=$next; fi
    [ -n "$next" ] || break
  done
  echo "${kept:-off}"
}

# source_files: apt's own list of source files, in the order apt reads them
# (the main list, then the parts directory's *.list and *.sources by name).
source_files() {
  local list=/etc/apt/sources.list parts=/etc/apt/sources.list.d/
  # apt-config prints shell assignments of its configured paths (APT_CONFIG
  # moves them, as it does for apt itself)
  if command -v apt-config >/dev/null; then eval "$(apt-config shell list Dir::Etc::sourcelist/f parts Dir::Etc::sourceparts/d)"; fi
  [ -f "$list" ] && echo "$list"
  local f
  for f in "${parts%/}"/*; do
    case $f in *.list|*.sources) [ -f "$f" ] && echo "$f" ;; esac
  done
  return 0
}

# one_line_uri SUITE <FILE: the first URI of `deb [options] URI SUITE COMPONENT...`
# lines serving SUITE's main component.
one_line_uri() {
  awk -v suite="$1" '
    { sub(/#.*/, "") }
    $1 != "deb" { next }
    {
      line = $0
      sub(/^[ \t]*deb[ \t]+/, "", line)
      sub(/^\[[^]]*\][ \t]*/, "", line)
      n = split(line, f, /[ \t]+/)
      if (n < 3 || f[2] != suite || f[1] !~ /^(https?|file):/) next
      for (i = 3; i <= n; i++) if (f[i] == "main") { print f[1]; exit }
    }'
}

# deb822_uri SUITE <FILE: the same for the deb822 format of *.sources files:
# stanzas of `Field: value` lines, separated by blank lines, values continued
# on indented lines, `Enabled: no` turning a stanza off.
deb822_uri() {
  awk -v suite="$1" '
    function has(list, word,   a, n, i) { n = split(list, a, /[ \t]+/); for (i = 1; i <= n; i++) if (a[i] == word) return 1; return 0 }
    function stanza_end(   u, n, i) {
      if (has(v["types"], "deb") && tolower(v["enabled"]) !~ /^[ \t]*no/ && has(v["suites"], suite) && has(v["components"], "main")) {
        n = split(v["uris"], u, /[ \t]+/)
        for (i = 1; i <= n; i++) if (u[i] ~ /^(https?|file):/) { print u[i]; found = 1; exit }
      }
      delete v; field = ""
    }
    /^#/ { next }
    /^[ \t]*$/ { stanza_end(); next }
    /^[ \t]/ { if (field != "") v[field] = v[field] " " $0; next }
    {
      field = tolower(substr($0, 1, index($0, ":") - 1))
      v[field] = substr($0, index($0, ":") + 1)
    }
    END { if (!found) stanza_end() }'
}

debian_mirror() {
  local suite=${1:?usage: $0 debian-mirror SUITE}
  if [ -n "${DEBIAN_MIRROR:-}" ]; then echo "$DEBIAN_MIRROR"; return; fi
  local f uri files_read=()
  while read -r f; do
    files_read+=("$f")
    case $f in
      *.sources) uri=$(deb822_uri "$suite" <"$f") ;;
      *) uri=$(one_line_uri "$suite" <"$f") ;;
    esac
    if [ -n "$uri" ]; then echo "${uri%/}"; return; fi
  done < <(source_files)
  echo "no apt source serves Debian $suite main (read: ${files_read[*]:-no source file}); set DEBIAN_MIRROR to a Debian mirror's URL" >&2
  return 1
}

case "${1:-}" in
  goproxy) goproxy ;;
  debian-mirror) debian_mirror "${2:-}" ;;
  *) echo "usage: $0 goproxy | debian-mirror SUITE" >&2; exit 2 ;;
esac
