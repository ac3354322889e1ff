package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			if r.URL.RawQuery != "n=1" {
				http.Error(w, "query lost", http.StatusBadRequest)
			}
		case "/moved":
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		case "/slow":
			time.Sleep(3 * time.Second)
		default:
			http.Error(w, "no", http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, c := range []struct {
		path string
		ok   bool
	}{{"/ok?n=1", true}, {"/moved", true}, {"/fail", false}, {"/slow", false}} {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		err := checkHTTP(ctx, host+c.path)
		cancel()
		if (err == nil) != c.ok {
			t.Errorf("%s: err = %v, want ok = %v", c.path, err, c.ok)
		}
	}
	if err := checkHTTP(context.Background(), "http://"+host+"/ok"); err == nil {
		t.Error("a scheme should be refused")
	}
}

func TestTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ctx := context.Background()
	if err := checkTCP(ctx, addr); err != nil {
		t.Fatalf("open port: %v", err)
	}
	ln.Close()
	if err := checkTCP(ctx, addr); err == nil {
		t.Fatal("closed port passed")
	}
	if err := checkTCP(ctx, "no-port"); err == nil {
		t.Fatal("bad address passed")
	}
}
