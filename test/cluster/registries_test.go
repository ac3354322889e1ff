package cluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/testenv"
)

// The Go proxy list is the one Go itself would walk, cut before the first
// entry that leaves the proxies (direct, off), with the user's GOPROXY
// first and `go env GOPROXY` second; no proxy at all is "off".
func TestGoproxyKeepsOnlyTheProxies(t *testing.T) {
	// a stand-in go whose `go env GOPROXY` is the machine's setting
	fakeGo := func(goproxy string) string {
		dir := t.TempDir()
		body := "#!/bin/sh\nexit 1\n"
		if goproxy != "" {
			body = "#!/bin/sh\n[ \"$1 $2\" = \"env GOPROXY\" ] && echo '" + goproxy + "'\n"
		}
		writeFile(t, dir, "go", body, 0o755)
		return dir
	}
	for _, c := range []struct {
		name, env, goEnv, want string
	}{
		{"the user's, without direct", "https://a.example/go,direct", "", "https://a.example/go"},
		{"every proxy before direct, separators kept", "https://a.example|https://b.example,direct", "", "https://a.example|https://b.example"},
		{"nothing past off", "https://a.example,off,https://b.example", "", "https://a.example"},
		{"a list without direct", "https://a.example,https://b.example", "", "https://a.example,https://b.example"},
		{"direct alone is no proxy", "direct", "", "off"},
		{"off alone is no proxy", "off", "", "off"},
		{"go env when the user set none", "", "https://mirror.example/go,direct", "https://mirror.example/go"},
		{"no proxy when go cannot tell", "", "", "off"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := fakeGo(c.goEnv) + string(os.PathListSeparator) + os.Getenv("PATH")
			r := runScript(t, []string{"GOPROXY=" + c.env, "PATH=" + path}, "registries.sh", "goproxy")
			if r.err != nil {
				t.Fatalf("registries.sh goproxy: %v\n%s", r.err, r.stderr)
			}
			if got := strings.TrimSpace(r.stdout); got != c.want {
				t.Errorf("GOPROXY=%q, go env GOPROXY=%q: got %q, want %q", c.env, c.goEnv, got, c.want)
			}
		})
	}
}

// aptSources lays out an apt configuration whose source list and parts
// directory are in a temporary directory, and returns the environment that
// points apt-config (and so registries.sh) at it.
func aptSources(t *testing.T, list string, parts map[string]string) (env []string, dir string) {
	t.Helper()
	if _, err := exec.LookPath("apt-config"); err != nil {
		testenv.Missing(t, "no apt-config on PATH (Debian's apt): the sources cannot be moved to a fixture")
	}
	dir = t.TempDir()
	if list != "" {
		writeFile(t, dir, "sources.list", list, 0o644)
	}
	if err := os.MkdirAll(filepath.Join(dir, "parts"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range parts {
		writeFile(t, filepath.Join(dir, "parts"), name, body, 0o644)
	}
	conf := writeFile(t, dir, "apt.conf",
		"Dir::Etc::sourcelist \""+filepath.Join(dir, "sources.list")+"\";\n"+
			"Dir::Etc::sourceparts \""+filepath.Join(dir, "parts")+"\";\n", 0o644)
	return []string{"APT_CONFIG=" + conf, "DEBIAN_MIRROR="}, dir
}

// The Debian mirror is the first source apt reads that serves the suite's
// main component, in either format, skipping what debootstrap cannot use.
func TestDebianMirrorFromAptSources(t *testing.T) {
	oneLine := `# a comment: deb http://comment.example/debian bookworm main
deb-src http://src.example/debian bookworm main
deb cdrom:[Debian GNU/Linux 12 _Bookworm_ - Official amd64 DVD]/ bookworm main
deb http://updates.example/debian bookworm-updates main
deb http://contrib.example/debian bookworm contrib
deb [ arch=amd64 signed-by=/usr/share/keyrings/k.gpg ] http://one-line.example/debian/ bookworm contrib main # trailing
`
	deb822 := `Types: deb
URIs: http://disabled.example/debian
Suites: bookworm
Components: main
Enabled: no

Types: deb-src deb
# a comment inside the stanza
URIs: mirror+file:/etc/apt/mirrors.txt
 http://deb822.example/debian
Suites: bookworm bookworm-updates
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
`
	for _, c := range []struct {
		name  string
		list  string
		parts map[string]string
		want  string
	}{
		{"one-line sources.list", oneLine, nil, "http://one-line.example/debian"},
		{"deb822 in the parts directory", "", map[string]string{"debian.sources": deb822, "old.list.disabled": "deb http://ignored.example/debian bookworm main\n"}, "http://deb822.example/debian"},
		{"sources.list before the parts", oneLine, map[string]string{"debian.sources": deb822}, "http://one-line.example/debian"},
		{"parts in name order", "", map[string]string{"a.list": "deb http://a.example/debian bookworm main\n", "b.sources": deb822}, "http://a.example/debian"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env, _ := aptSources(t, c.list, c.parts)
			r := runScript(t, env, "registries.sh", "debian-mirror", "bookworm")
			if r.err != nil {
				t.Fatalf("registries.sh debian-mirror bookworm: %v\n%s", r.err, r.stderr)
			}
			if got := strings.TrimSpace(r.stdout); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}

	t.Run("DEBIAN_MIRROR overrides the sources", func(t *testing.T) {
		env, _ := aptSources(t, oneLine, nil)
		r := runScript(t, append(env, "DEBIAN_MIRROR=http://override.example/debian"), "registries.sh", "debian-mirror", "bookworm")
		if got := strings.TrimSpace(r.stdout); r.err != nil || got != "http://override.example/debian" {
			t.Errorf("got %q (%v), want the override", got, r.err)
		}
	})

	t.Run("no source of the suite fails naming the files read", func(t *testing.T) {
		env, dir := aptSources(t, oneLine, map[string]string{"debian.sources": deb822})
		r := runScript(t, env, "registries.sh", "debian-mirror", "trixie")
		if r.err == nil {
			t.Fatalf("found %q for a suite no source serves", r.stdout)
		}
		for _, want := range []string{"trixie", filepath.Join(dir, "sources.list"), filepath.Join(dir, "parts", "debian.sources"), "DEBIAN_MIRROR"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("the message does not name %q:\n%s", want, r.stderr)
			}
		}
	})
}
