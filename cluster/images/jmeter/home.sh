#!/usr/bin/env bash
# Assembles a headless JMeter home from Maven Central (pom.xml beside this
# script) and prints its path, ${ORCHBENCH_CACHE:-~/.cache/orchbench}/jmeter/VERSION-HASH
# (the pinned version, and the hash of the pom and of this script): laid out as
# JMeter's own distribution is, so its launcher finds everything:
#   bin/ApacheJMeter.jar  the launcher (org.apache.jmeter:ApacheJMeter)
#   bin/*.properties      ApacheJMeter_config's bin/ tree (jmeter, saveservice,
#                         upgrade, system, user properties, log4j2.xml), without
#                         its GUI templates and HTML report template
#   lib/ext/              ApacheJMeter_core, _http, _components
#   lib/                  their runtime dependencies, as Maven resolves them
#   lib/junit/            empty (JMeter's JUnit sampler is not assembled)
# Built once per pin; MAVEN_REPO_LOCAL (default ~/.m2/repository) keeps the downloads.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
cache="${ORCHBENCH_CACHE:-$HOME/.cache/orchbench}"
say() { printf '[jmeter] %s\n' "$*" >&2; }

version=$(sed -n 's:.*<jmeter.version>\(.*\)</jmeter.version>.*:\1:p' "$here/pom.xml")
[ -n "$version" ] || { say "no <jmeter.version> in $here/pom.xml"; exit 1; }
hash=$(cat "$here/pom.xml" "$here/home.sh" | sha256sum | cut -c1-12)
home="$cache/jmeter/$version-$hash"
if [ -f "$home/.complete" ]; then echo "$home"; exit 0; fi

for tool in mvn python3; do
  command -v "$tool" >/dev/null || { say "$tool is missing (Debian's maven, python3): run ./justw tools"; exit 1; }
done
mkdir -p "$root/.state/logs" "$cache/jmeter"
log="$root/.state/logs/maven-jmeter.log"
tmp=$(mktemp -d "$cache/jmeter/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cp "$here/pom.xml" "$tmp/"
say "mvn dependency:copy-dependencies for JMeter $version (cold ~30 s with downloads)"
(cd "$tmp" && mvn -B -q -Dmaven.repo.local="${MAVEN_REPO_LOCAL:-$HOME/.m2/repository}" \
  dependency:copy-dependencies -DoutputDirectory="$tmp/jars") >"$log" 2>&1 || {
  say "mvn failed; last lines of .state/logs/maven-jmeter.log:"; tail -n 30 "$log" | sed 's/^/    /' >&2; exit 1; }

# lib/junit: the launcher prints a stack trace when it cannot list it
mkdir -p "$tmp/home/bin" "$tmp/home/lib/ext" "$tmp/home/lib/junit"
for jar in "$tmp"/jars/*.jar; do
  name=$(basename "$jar")
  case $name in
    "ApacheJMeter-$version.jar") cp "$jar" "$tmp/home/bin/ApacheJMeter.jar" ;;
    ApacheJMeter_config-*) python3 - "$jar" "$tmp/home" <<'PY' ;;
import sys, zipfile
# bin/ without the GUI's templates and the HTML report's template
with zipfile.ZipFile(sys.argv[1]) as z:
    z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("bin/")
                               and not n.startswith(("bin/templates/", "bin/report-template/"))])
PY
    ApacheJMeter_*) cp "$jar" "$tmp/home/lib/ext/" ;;
    *) cp "$jar" "$tmp/home/lib/" ;;
  esac
done
for f in bin/ApacheJMeter.jar bin/jmeter.properties bin/saveservice.properties bin/upgrade.properties \
  "lib/ext/ApacheJMeter_core-$version.jar" "lib/ext/ApacheJMeter_http-$version.jar" "lib/ext/ApacheJMeter_components-$version.jar"; do
  [ -f "$tmp/home/$f" ] || { say "the assembled home lacks $f"; exit 1; }
done
# the launcher the image runs and .tools/bin/jmeter links to: one place for
# the JVM's flags. The heap is half the memory limit (the load job's 256 MiB;
# JMeter's own script asks for 1 GiB), and a JVM out of heap exits instead
# of measuring on.
cat >"$tmp/home/bin/jmeter" <<'SH'
#!/bin/sh
# JMeter, headless, as orchbench runs it (cluster/images/jmeter/home.sh)
home=$(dirname "$(dirname "$(readlink -f "$0")")")
exec java -XX:MaxRAMPercentage=50 -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true -jar "$home/bin/ApacheJMeter.jar" "$@"
SH
chmod 755 "$tmp/home/bin/jmeter"
touch "$tmp/home/.complete"
rm -rf "$home"
mv "$tmp/home" "$home"
say "JMeter $version: $(find "$home/lib" -name '*.jar' | wc -l) jars in $home"
echo "$home"
