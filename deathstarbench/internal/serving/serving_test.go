package serving

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestGroupBindsServesAndStops(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	if _, err := Bind([]string{"a", "b"}, map[string]string{"b": busy.Addr().String()}, func(string) bool { return true }); err == nil || !strings.HasPrefix(err.Error(), "b: ") {
		t.Fatalf("a port in use: %v, want an error naming the service", err)
	}

	free, _ := net.Listen("tcp", "127.0.0.1:0")
	fixed := free.Addr().String()
	free.Close()
	g, err := Bind([]string{"front", "back"}, map[string]string{"front": fixed}, func(name string) bool { return name == "front" })
	if err != nil {
		t.Fatal(err)
	}
	if g.Addrs["front"] != fixed || g.Addrs["back"] == "" {
		t.Fatalf("addresses %v", g.Addrs)
	}
	given := map[string]string{"back": "10.0.0.9:9090", "store": "10.0.0.8:9090"}
	if over := g.Over(given); over["back"] != g.Addrs["back"] || over["store"] != "10.0.0.8:9090" || over["front"] != fixed || given["back"] != "10.0.0.9:9090" {
		t.Fatalf("Over(%v) = %v: want the group's addresses over the given ones, the given map untouched", given, over)
	}
	// the released fixed port refuses until the service serves
	if c, err := net.Dial("tcp", fixed); err == nil {
		c.Close()
		t.Fatal("the fixed port accepts connections before its service serves")
	}
	if err := g.ServeHTTP("front", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hi") })); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + fixed + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hi" {
		t.Fatalf("served %q", body)
	}
	g.Go("back", func() error { return errors.New("boom") }, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := g.Wait(ctx); err == nil || err.Error() != "back: boom" {
		t.Fatalf("Wait: %v, want the failing server named", err)
	}
	g.Stop()
	if _, err := http.Get("http://" + fixed + "/"); err == nil {
		t.Fatal("still serving after Stop")
	}
}
