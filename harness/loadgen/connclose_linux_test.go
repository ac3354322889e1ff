package loadgen

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/testutil"
)

// A connection-per-request run leaves no socket of its own behind once its
// responses are read: no TIME_WAIT (nor FIN_WAIT on the way to it). At a
// few hundred connections a second TIME_WAIT exhausts a netns's ephemeral
// ports within a minute, and a port reused on loopback met the NAT entry of
// its old connection (a Kubernetes NodePort refused about a connection in
// eight). The server here answers and closes its side 50 ms later, so the
// client closes first, as it did behind a relay slower to close than the
// client was to read.
func TestConnectionCloseLeavesNoSocketBehind(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			addr := testutil.ListenAndHold(t, func(c net.Conn) {
				defer c.Close()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
					return
				}
				fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
				time.Sleep(50 * time.Millisecond)
			})
			res := runLoad(t, Config{URL: "http://" + addr + "/", Threads: 1, Connections: 4, Rate: 200,
				Duration: 500 * time.Millisecond, ConnectionClose: true, Engine: engine})
			if res.Requests < 90 || res.Errors.Connect+res.Errors.Read+res.Errors.Write > 0 {
				t.Fatalf("%d requests, errors %+v: want about 100 and none", res.Requests, res.Errors)
			}
			time.Sleep(200 * time.Millisecond) // every server side closed
			_, port, _ := net.SplitHostPort(addr)
			if n := closingTo(t, port); n > 0 {
				t.Fatalf("%d of the client's sockets to port %s in FIN_WAIT or TIME_WAIT after %d requests: want none", n, port, res.Requests)
			}
		})
	}
}

// closingTo counts the sockets in /proc/net/tcp whose remote port is port
// and whose state is FIN_WAIT1 (04), FIN_WAIT2 (05) or TIME_WAIT (06): the
// side that closed first, on its way out.
func closingTo(t *testing.T, port string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	remote := fmt.Sprintf(":%04X", p)
	n := 0
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 3 && strings.HasSuffix(f[2], remote) && (f[3] == "04" || f[3] == "05" || f[3] == "06") {
			n++
		}
	}
	return n
}
