package sockets

import (
	"net"
	"os"
	"testing"
	"time"
)

func TestAcceptorOfFindsTheAcceptingProcess(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	a, found, err := AcceptorOf(ln.Addr().String(), 2*time.Second)
	if err != nil || !found || a.PID != os.Getpid() || a.Command == "" {
		t.Fatalf("acceptor %+v, found %v, error %v; want this process (pid %d)", a, found, err, os.Getpid())
	}
}

// A listener that never accepts (as docker's port reservation, which the
// kernel's NAT rule bypasses) is named when the connection waits in its queue.
func TestAcceptorOfSaysWhenNobodyAccepts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, found, err := AcceptorOf(ln.Addr().String(), 200*time.Millisecond)
	if !found || err == nil {
		t.Fatalf("found %v, error %v; want the unaccepted connection reported", found, err)
	}
}
