package snapshot

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/testenv"
)

func startMemcached(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("memcached")
	if err != nil {
		testenv.Missing(t, "memcached not installed (`just tools` installs it): %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "-l", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "0", "-m", "16", "-u", "nobody")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
		if i > 100 {
			t.Fatal("memcached did not listen")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// send writes raw protocol text and returns the answer up to and including
// the line end.
func send(t *testing.T, addr, text, end string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(text)); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	r := bufio.NewReader(c)
	for !strings.HasSuffix(b.String(), end) {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v", b.String(), err)
		}
		b.WriteString(line)
	}
	return b.String()
}

// The dump, replayed into an empty memcached as the image's entrypoint
// replays it, gives back every item: value (binary, with \r\n inside),
// flags, and what was left of its TTL.
func TestMemcachedDumpRestoresEveryItem(t *testing.T) {
	from, to := startMemcached(t), startMemcached(t)
	value := "line one\r\nline two \x00\xff"
	send(t, from, fmt.Sprintf("set post:1 7 3600 %d\r\n%s\r\nset user%%20x 0 0 2\r\nhi\r\n", len(value), value), "STORED\r\nSTORED\r\n")
	var many strings.Builder
	for i := range 250 { // more than one get batch
		fmt.Fprintf(&many, "set k%d 0 0 %d noreply\r\n%d\r\n", i, len(strconv.Itoa(i)), i)
	}
	send(t, from, many.String()+"get k249\r\n", "END\r\n")

	dir := t.TempDir()
	n, err := dumpMemcached(context.Background(), from, dir)
	if err != nil {
		t.Fatal(err)
	}
	if n != 252 {
		t.Errorf("dumped %d items, want 252", n)
	}
	dump, err := os.ReadFile(filepath.Join(dir, memcachedDumpFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(dump), "set post:1 7 3600 ") && !strings.Contains(string(dump), "set post:1 7 3599 ") {
		t.Errorf("post:1 lost its flags or TTL in the dump:\n%.300s", dump)
	}
	send(t, to, string(dump)+"get k0 k249\r\n", "END\r\n")
	got := send(t, to, "get post:1 user%20x k0 k249\r\n", "END\r\n")
	want := fmt.Sprintf("VALUE post:1 7 %d\r\n%s\r\nVALUE user%%20x 0 2\r\nhi\r\nVALUE k0 0 1\r\n0\r\nVALUE k249 0 3\r\n249\r\nEND\r\n", len(value), value)
	if got != want {
		t.Errorf("restored:\n%q\nwant\n%q", got, want)
	}
}
