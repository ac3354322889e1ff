//go:build e2e

package e2e

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The requests of DeathStarBench's wrk2 Lua scripts (compose-post.lua,
// read-home-timeline.lua, read-user-timeline.lua, mixed-workload.lua) as
// they reach the server. Written from what the scripts do, not from our
// workload package, so that a mistake there does not hide here.

// wrk2Origin is the scheme and authority the scripts put in every request
// target (absolute-form), whatever server wrk is pointed at.
const wrk2Origin = "http://localhost:8080"

// wrk2Charset is the scripts' charset table, in its order.
const wrk2Charset = "qwertyuiopasdfghjklzxcvbnmQWERTYUIOPASDFGHJKLZXCVBNM1234567890"

// wireRequest is one request as sent.
type wireRequest struct {
	method, target string
	body           string
	label          string
	// user is the request's user, start and stop a read's page, for
	// checking the answer.
	user, start, stop int
}

func randomString(rng *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// wrk2Compose is compose-post.lua's request. Its loops run from 0 to the
// drawn count inclusive, so a post has 1..6 mentions (never of its
// author), 1..6 URLs and 1..5 media, and the body is not percent-encoded.
func wrk2Compose(rng *rand.Rand, users int) wireRequest {
	user := rng.IntN(users)
	text := randomString(rng, wrk2Charset, 256)
	for range rng.IntN(6) + 1 {
		mentioned := rng.IntN(users)
		for mentioned == user {
			mentioned = rng.IntN(users)
		}
		text += " @username_" + strconv.Itoa(mentioned)
	}
	for range rng.IntN(6) + 1 {
		text += " http://" + randomString(rng, wrk2Charset, 64)
	}
	var ids, types []string
	for range rng.IntN(5) + 1 {
		ids = append(ids, `"`+randomString(rng, "1234567890", 18)+`"`)
		types = append(types, `"png"`)
	}
	body := "username=username_" + strconv.Itoa(user) + "&user_id=" + strconv.Itoa(user) +
		"&text=" + text + "&media_ids=[" + strings.Join(ids, ",") + "]" +
		"&media_types=[" + strings.Join(types, ",") + "]&post_type=0"
	return wireRequest{method: "POST", target: wrk2Origin + "/wrk2-api/post/compose", body: body, label: "compose", user: user}
}

// wrk2Read is read-home-timeline.lua's or read-user-timeline.lua's request
// (which is "home-timeline" or "user-timeline").
func wrk2Read(rng *rand.Rand, users int, which string) wireRequest {
	user, start := rng.IntN(users), rng.IntN(101)
	return readRequest(which, user, start, start+10)
}

func readRequest(which string, user, start, stop int) wireRequest {
	query := fmt.Sprintf("user_id=%d&start=%d&stop=%d", user, start, stop)
	return wireRequest{method: "GET", target: wrk2Origin + "/wrk2-api/" + which + "/read?" + query, label: which, user: user, start: start, stop: stop}
}

// wrk2Mixed is mixed-workload.lua's draw: 60 % home, 30 % user, 10 % compose.
func wrk2Mixed(rng *rand.Rand, users int) wireRequest {
	switch coin := rng.Float64(); {
	case coin < 0.6:
		return wrk2Read(rng, users, "home-timeline")
	case coin < 0.9:
		return wrk2Read(rng, users, "user-timeline")
	default:
		return wrk2Compose(rng, users)
	}
}

// wireBytes renders r as wrk.format does: the target as the script gave
// it, a Host header for the server wrk was pointed at, the script's
// Content-Type (the read scripts set it too), and a Content-Length only
// with a body.
func wireBytes(host string, r wireRequest) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\n", r.method, r.target, host)
	if r.body != "" {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(r.body))
	}
	b.WriteString("\r\n")
	b.WriteString(r.body)
	return []byte(b.String())
}

// answer is what came back for one request.
type answer struct {
	status int
	body   string
	err    error
}

// sendRaw sends requests over conns keep-alive TCP connections, writing
// each request's bytes itself (net/http's client cannot send an
// absolute-form target to a server that is not a proxy), and returns the
// answers in request order.
func sendRaw(t *testing.T, addr string, conns int, requests []wireRequest) []answer {
	t.Helper()
	answers := make([]answer, len(requests))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(conns, len(requests)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var conn net.Conn
			var reader *bufio.Reader
			defer func() {
				if conn != nil {
					conn.Close()
				}
			}()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(requests) {
					return
				}
				if conn == nil {
					c, err := net.DialTimeout("tcp", addr, 5*time.Second)
					if err != nil {
						answers[i] = answer{err: err}
						continue
					}
					conn, reader = c, bufio.NewReader(c)
				}
				conn.SetDeadline(time.Now().Add(60 * time.Second))
				var keep bool
				answers[i], keep = roundTrip(conn, reader, wireBytes(addr, requests[i]))
				if !keep {
					conn.Close()
					conn = nil
				}
			}
		}()
	}
	wg.Wait()
	return answers
}

// roundTrip sends one request and reads its answer; keep says whether the
// connection can carry the next.
func roundTrip(conn net.Conn, reader *bufio.Reader, request []byte) (answer, bool) {
	if _, err := conn.Write(request); err != nil {
		return answer{err: err}, false
	}
	resp, err := http.ReadResponse(reader, nil)
	if err != nil {
		return answer{err: err}, false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, body: string(body), err: err}, err == nil && !resp.Close
}
