// Command orchbench-check is the health check that orchestrators without a
// service registry of their own (Docker Swarm) run inside a task's
// container. It is static, so every orchbench image carries it at
// /orchbench-check, whatever the image holds besides:
//
//	orchbench-check http HOST:PORT/PATH   exit 0 on a 2xx or 3xx answer within 2 s
//	orchbench-check tcp HOST:PORT         exit 0 when a connection opens within 2 s
//
// Any other outcome exits 1 with the reason on stdout, which Docker keeps
// in the container's health log; a usage error exits 2.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

const timeout = 2 * time.Second

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: orchbench-check http HOST:PORT/PATH | tcp HOST:PORT")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var err error
	switch os.Args[1] {
	case "http":
		err = checkHTTP(ctx, os.Args[2])
	case "tcp":
		err = checkTCP(ctx, os.Args[2])
	default:
		fmt.Fprintf(os.Stderr, "orchbench-check: unknown check %q (http or tcp)\n", os.Args[1])
		os.Exit(2)
	}
	if err != nil {
		fmt.Println("unhealthy:", err)
		os.Exit(1)
	}
	fmt.Println("healthy")
}

// checkHTTP GETs http://target without following redirects: a 3xx passes,
// as it does for Consul's and Nomad's HTTP checks.
func checkHTTP(ctx context.Context, target string) error {
	if strings.Contains(target, "://") {
		return fmt.Errorf("%q: give HOST:PORT/PATH without a scheme", target)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+target, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "orchbench-check")
	client := &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true},
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Errorf("GET http://%s: %s", target, resp.Status)
	}
	return nil
}

func checkTCP(ctx context.Context, target string) error {
	if _, _, err := net.SplitHostPort(target); err != nil {
		return fmt.Errorf("%q is not HOST:PORT: %w", target, err)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", target)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("connect %s: no answer within %s", target, timeout)
		}
		return err
	}
	return conn.Close()
}
