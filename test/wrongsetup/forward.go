package wrongsetup

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Forward relays every connection l accepts to the address target gives at
// that moment, until l is closed: the proxy the load-path gate must see.
func Forward(l net.Listener, target func() (string, error)) {
	for {
		in, err := l.Accept()
		if err != nil {
			return
		}
		go relay(in, target)
	}
}

func relay(in net.Conn, target func() (string, error)) {
	defer in.Close()
	addr, err := target()
	if err != nil {
		return
	}
	out, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return
	}
	defer out.Close()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); io.Copy(out, in); out.(*net.TCPConn).CloseWrite() }()
	go func() { defer wg.Done(); io.Copy(in, out); in.(*net.TCPConn).CloseWrite() }()
	wg.Wait()
}

// ConsulInstance is the address of a healthy instance of service, asked of
// the Consul agent at consul (http://host:port).
func ConsulInstance(consul, service string) (string, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(consul + "/v1/health/service/" + service + "?passing=true")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var entries []struct {
		Service struct {
			Address string
			Port    int
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&entries); err != nil || len(entries) == 0 {
		return "", fmt.Errorf("no passing instance of %s (%v)", service, err)
	}
	return net.JoinHostPort(entries[0].Service.Address, fmt.Sprint(entries[0].Service.Port)), nil
}
