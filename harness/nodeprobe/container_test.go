package nodeprobe

import (
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/limits"
)

const (
	idA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	idB = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
)

// fakeProc points limits.ProcRoot and DockerRoot at a tree of processes:
// each PID's cgroup file puts it at the given cpu cgroup path, with env as
// its environment.
func fakeProc(t *testing.T, procs map[int]string, env map[int][]string) {
	t.Helper()
	root, docker := t.TempDir(), t.TempDir()
	for pid, cg := range procs {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, "cgroup"), "4:cpu,cpuacct:"+cg+"\n3:memory:"+cg+"\n")
		write(t, filepath.Join(dir, "environ"), strings.Join(env[pid], "\x00")+"\x00")
	}
	for _, id := range []string{idA, idB} {
		dir := filepath.Join(docker, "containers", id)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, "config.v2.json"), `{"ID":"`+id+`","Image":"sha256:image-of-`+id[:4]+`"}`)
	}
	oldProc, oldDocker := limits.ProcRoot, DockerRoot
	limits.ProcRoot, DockerRoot = root, docker
	t.Cleanup(func() { limits.ProcRoot, DockerRoot = oldProc, oldDocker })
}

func write(t *testing.T, file, s string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestContainerIDOfEveryRuntimesCgroupNames(t *testing.T) {
	for path, want := range map[string]string{
		"/docker/" + idA:                                        idA,
		"/obn-nodes/pr-w1/docker/" + idA:                        idA,
		"/system.slice/docker-" + idA + ".scope":                idA,
		"/kubepods.slice/pod1/cri-containerd-" + idB + ".scope": idB,
		"/kubepods/burstable/pod7/" + idB:                       idB,
		"/nomad/4c2e.web":                                       "",
		"/user.slice/user-0.slice":                              "",
		"/docker/" + idA[:12]:                                   "",
		"/docker/" + strings.ToUpper(idA):                       "",
	} {
		if got := ContainerIDOf(limits.Membership{PID: 1, Paths: map[string]string{"cpu": path}}); got != want {
			t.Errorf("%s: container %q, want %q", path, got, want)
		}
	}
}

func TestContainerProcessIsTheLowestPIDOfTheContainer(t *testing.T) {
	fakeProc(t, map[int]string{1: "/", 40: "/docker/" + idB, 41: "/docker/" + idA, 77: "/docker/" + idA}, nil)
	for _, id := range []string{idA, "docker://" + idA, "containerd://" + idA} {
		p, err := Local{NodeName: "w1"}.ContainerProcess(ctx, id)
		if err != nil || p.PID != 41 || p.ContainerID != idA || p.ImageID != "sha256:image-of-aaaa" {
			t.Errorf("%s: %+v, %v; want pid 41 of %s with its image", id, p, err, idA)
		}
	}
	if _, err := (Local{}).ContainerProcess(ctx, idA[:12]); err == nil || !strings.Contains(err.Error(), "not a full container ID") {
		t.Errorf("a short ID: %v, want it refused", err)
	}
	gone := strings.Repeat("e", 64)
	if _, err := (Local{}).ContainerProcess(ctx, gone); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a container with no process: %v, want not-exist", err)
	}
}

func TestNomadTaskProcessIsFoundByItsEnvironmentInsideAContainer(t *testing.T) {
	alloc := "4c2e0d6a-1111-2222-3333-444455556666"
	fakeProc(t, map[int]string{
		10: "/nomad",               // the probe itself as a raw_exec task: same variables, no container
		20: "/docker/" + idB,       // another task of the same allocation
		30: "/docker/" + idA,       // the task
		31: "/docker/" + idA,       // its child
		50: "/docker/" + idB + "x", // not a container cgroup
	}, map[int][]string{
		10: {"NOMAD_ALLOC_ID=" + alloc, "NOMAD_TASK_NAME=web"},
		20: {"NOMAD_ALLOC_ID=" + alloc, "NOMAD_TASK_NAME=web-cache"},
		30: {"PATH=/bin", "NOMAD_TASK_NAME=web", "NOMAD_ALLOC_ID=" + alloc},
		31: {"NOMAD_ALLOC_ID=" + alloc, "NOMAD_TASK_NAME=web"},
	})
	p, err := Local{}.NomadTaskProcess(ctx, alloc, "web")
	if err != nil || p.PID != 30 || p.ContainerID != idA || p.ImageID == "" {
		t.Fatalf("%+v, %v; want pid 30 in container %s", p, err, idA)
	}
	if _, err := (Local{}).NomadTaskProcess(ctx, alloc, "db"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a task with no process: %v, want not-exist", err)
	}
}

// Redis writes its process title over its own /proc environ, so a task's
// process is found by the environment Docker started its container with.
func TestNomadTaskProcessIsFoundByDockersRecordWhenItsEnvironIsOverwritten(t *testing.T) {
	alloc := "ed0bf707-d3ad-8fb9-4afc-260338ae60a9"
	fakeProc(t, map[int]string{30: "/docker/" + idA}, map[int][]string{30: {"redis-server 127.0.0.1:27000"}})
	write(t, filepath.Join(DockerRoot, "containers", idA, "config.v2.json"),
		`{"ID":"`+idA+`","Image":"sha256:redis","Config":{"Env":["NOMAD_ALLOC_ID=`+alloc+`","NOMAD_TASK_NAME=redis","PATH=/bin"]}}`)
	p, err := Local{}.NomadTaskProcess(ctx, alloc, "redis")
	if err != nil || p.PID != 30 || p.ContainerID != idA || p.ImageID != "sha256:redis" {
		t.Fatalf("%+v, %v; want pid 30 in container %s", p, err, idA)
	}
	if _, err := (Local{}).NomadTaskProcess(ctx, alloc, "memcached"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("another task of the allocation: %v, want not-exist", err)
	}
}

func TestSignalReachesOnlyAProcessInsideTheNamedContainer(t *testing.T) {
	victim := child(t)
	bystander := child(t)
	// the victim's entry in the fake /proc puts it in container A; the
	// bystander is in no container
	fakeProc(t, map[int]string{victim: "/docker/" + idA, bystander: "/user.slice"}, nil)
	c := remote(t, "w1")
	if _, err := c.SignalContainer(ctx, idA, "SIGSTOP"); err == nil || !strings.Contains(err.Error(), "not one a probe sends") {
		t.Fatalf("SIGSTOP: %v, want it refused", err)
	}
	if _, err := c.SignalContainer(ctx, idB, "SIGKILL"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a container with no process: %v, want not-exist", err)
	}
	p, err := c.SignalContainer(ctx, idA, "SIGKILL")
	if err != nil || p.PID != victim {
		t.Fatalf("SIGKILL to container A: %+v, %v; want pid %d", p, err, victim)
	}
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(victim, 0) == nil && !exited(victim) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still runs after SIGKILL", victim)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(bystander, 0); err != nil {
		t.Fatalf("the bystander was hit: %v", err)
	}
}

// exited: a killed child stays a zombie until reaped; its state says Z.
func exited(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] == "Z"
}

func TestProbeRefusesAnotherNodesRequestsAndAMissingToken(t *testing.T) {
	s := NewServer(Local{NodeName: "w1"})
	s.Token = "s3cret"
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)

	wired := NewClient("w1", srv.URL)
	wired.Token = "s3cret"
	if name, err := wired.Identity(ctx); err != nil || name != "w1" {
		t.Fatalf("the right node and token: %q, %v", name, err)
	}
	// a resolver that sends node w2's reads to w1's probe
	miswired := NewClient("w2", srv.URL)
	miswired.Token = "s3cret"
	_, err := miswired.Limits(ctx, os.Getpid())
	var pe *Error
	if !errors.As(err, &pe) || pe.Kind != KindRefused || !strings.Contains(err.Error(), "serves node w1, not node w2") {
		t.Fatalf("w2's read at w1's probe: %v, want it refused naming both", err)
	}
	for _, token := range []string{"", "guess"} {
		c := NewClient("w1", srv.URL)
		c.Token = token
		if _, err := c.Identity(ctx); !errors.As(err, &pe) || pe.Kind != KindRefused || !strings.Contains(err.Error(), TokenHeader) {
			t.Errorf("token %q: %v, want it refused", token, err)
		}
	}
	// a request that names no node
	res, err := http.Post(srv.URL+"/v1/identity", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode == http.StatusOK {
		t.Errorf("a request without %s was served", NodeHeader)
	}
}

func TestReadToken(t *testing.T) {
	if tok, err := ReadToken(""); tok != "" || err != nil {
		t.Errorf("no file: %q, %v", tok, err)
	}
	f := filepath.Join(t.TempDir(), "token")
	write(t, f, "  abc\n")
	if tok, err := ReadToken(f); tok != "abc" || err != nil {
		t.Errorf("%q, %v; want abc", tok, err)
	}
	write(t, f, "\n")
	if _, err := ReadToken(f); err == nil {
		t.Error("an empty token file was accepted")
	}
	if _, err := ReadToken(f + ".missing"); err == nil {
		t.Error("a missing token file was accepted")
	}
}

func TestCheckRunsInTheContainersNamespaceThroughTheProbe(t *testing.T) {
	task := child(t)
	fakeProc(t, map[int]string{task: "/docker/" + idA}, nil)
	// the fake /proc entry's namespace is the real process's: this test's own
	nsDir := filepath.Join(limits.ProcRoot, strconv.Itoa(task), "ns")
	if err := os.MkdirAll(nsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/proc/"+strconv.Itoa(task)+"/ns/net", filepath.Join(nsDir, "net")); err != nil {
		t.Fatal(err)
	}
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sick" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(app.Close)
	addr := strings.TrimPrefix(app.URL, "http://")
	c := remote(t, "w1")
	check := func(typ, path string) (CheckResponse, error) {
		return c.CheckContainer(ctx, CheckRequest{ContainerID: idA, Type: typ, Address: addr, Path: path, Timeout: 2 * time.Second})
	}
	if r, err := check("http", "/"); err != nil || !r.Healthy || r.PID != task {
		t.Errorf("a healthy app: %+v, %v", r, err)
	}
	if r, err := check("http", "/sick"); err != nil || r.Healthy || !strings.Contains(r.Detail, "status 503") {
		t.Errorf("a sick app: %+v, %v; want unhealthy, saying 503", r, err)
	}
	if r, err := check("tcp", ""); err != nil || !r.Healthy {
		t.Errorf("tcp: %+v, %v", r, err)
	}
	if _, err := check("udp", ""); err == nil {
		t.Error("an unknown check type was run")
	}
	if _, err := c.CheckContainer(ctx, CheckRequest{ContainerID: idB, Type: "tcp", Address: addr, Timeout: time.Second}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a container with no process: %v, want not-exist", err)
	}
	if _, err := c.CheckContainer(ctx, CheckRequest{ContainerID: idA, Type: "tcp", Address: addr, Timeout: time.Hour}); err == nil {
		t.Error("a check that may hold the probe for an hour was run")
	}
}

// A container whose image was pulled from a registry is named by the
// repository digest Docker keeps for it, as Kubernetes names a pulled
// image, so a parity table sees one image; a locally built one by its ID.
func TestContainerImageIsItsRepositoryDigestWhenPulled(t *testing.T) {
	fakeProc(t, map[int]string{30: "/docker/" + idA, 40: "/docker/" + idB}, nil)
	const digest = "10.77.0.10:5000/orchbench/taewa@sha256:4f1c2e9ab07d"
	write(t, filepath.Join(DockerRoot, "containers", idA, "config.v2.json"),
		`{"ID":"`+idA+`","Image":"sha256:cfg-a","Config":{"Image":"10.77.0.10:5000/orchbench/taewa:local"}}`)
	write(t, filepath.Join(DockerRoot, "containers", idB, "config.v2.json"),
		`{"ID":"`+idB+`","Image":"sha256:cfg-b","Config":{"Image":"orchbench/taewa:local"}}`)
	if err := os.MkdirAll(filepath.Join(DockerRoot, "image", "overlay2"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(DockerRoot, "image", "overlay2", "repositories.json"), `{"Repositories":{
		"10.77.0.10:5000/orchbench/taewa":{"10.77.0.10:5000/orchbench/taewa:local":"sha256:cfg-a","`+digest+`":"sha256:cfg-a","10.77.0.10:5000/orchbench/taewa@sha256:older":"sha256:cfg-old"},
		"orchbench/taewa":{"orchbench/taewa:local":"sha256:cfg-b"}}}`)
	if p, err := (Local{}).ContainerProcess(ctx, idA); err != nil || p.ImageID != digest {
		t.Errorf("a pulled image: %+v, %v; want %s", p, err, digest)
	}
	if p, err := (Local{}).ContainerProcess(ctx, idB); err != nil || p.ImageID != "sha256:cfg-b" {
		t.Errorf("a local build: %+v, %v; want its image ID", p, err)
	}
}

// A probe in a container of its own (Kubernetes', Swarm's) reports the
// node's system through its init's root, not its image's.
func TestFactsAreTheNodesOwnSystem(t *testing.T) {
	fakeProc(t, map[int]string{1: "/"}, nil)
	etc := filepath.Join(limits.ProcRoot, "1", "root", "etc")
	if err := os.MkdirAll(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(etc, "os-release"), "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\nVERSION_ID=\"12\"\n")
	write(t, filepath.Join(etc, "debian_version"), "12.15\n")
	f, err := (Local{}).Facts(ctx)
	if err != nil || f["os.name"] != "debian" || f["os.version"] != "12.15" {
		t.Errorf("facts %v, %v; want the node's debian 12.15", f, err)
	}
	// where a sandbox's init refuses its root, the node's /etc mounted
	mounted := t.TempDir()
	if err := os.MkdirAll(filepath.Join(mounted, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(mounted, "etc", "os-release"), "ID=debian\nVERSION_ID=\"12\"\n")
	write(t, filepath.Join(mounted, "etc", "debian_version"), "12.11\n")
	old := SystemRoot
	SystemRoot = mounted
	t.Cleanup(func() { SystemRoot = old })
	if f, err := (Local{}).Facts(ctx); err != nil || f["os.version"] != "12.11" {
		t.Errorf("facts with --system-root: %v, %v; want the mounted 12.11", f, err)
	}
}
