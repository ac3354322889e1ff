package loadgen

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// What DeathStarBench's hotel-reservation script needs from the engine,
// checked with testdata/hotel-mixed.lua, a script of the same shape.

const hotelOrigin = "http://localhost:5000"

// hotelMethods is each endpoint's method.
var hotelMethods = map[string]string{
	"/hotels": "GET", "/recommendations": "GET", "/user": "POST", "/reservation": "POST",
}

// coordinate is a latitude or longitude as LuaJIT prints the script's
// grid points: at most three decimals.
var coordinate = regexp.MustCompile(`^-?\d+(\.\d{1,3})?$`)

// checkHotelTarget checks one request line of the hotel script and returns
// its endpoint.
func checkHotelTarget(t *testing.T, method, target string) string {
	t.Helper()
	if !strings.HasPrefix(target, hotelOrigin+"/") {
		t.Fatalf("%s %s: want an absolute-form target on %s", method, target, hotelOrigin)
	}
	u, err := url.Parse(target)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	want, ok := hotelMethods[u.Path]
	if !ok || method != want {
		t.Fatalf("%s %s: unknown endpoint or wrong method", method, target)
	}
	q := u.Query()
	switch u.Path {
	case "/hotels", "/recommendations":
		if !coordinate.MatchString(q.Get("lat")) || !coordinate.MatchString(q.Get("lon")) {
			t.Fatalf("%s: lat/lon not printed as LuaJIT's tostring prints them", target)
		}
	case "/reservation":
		if !strings.Contains(u.RawQuery, "&lat=nil&lon=nil&") {
			t.Fatalf("%s: want lat=nil&lon=nil from the undefined globals", target)
		}
	}
	return u.Path
}

func TestHotelScriptRuns(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("{}")) })
	res := runLoad(t, Config{URL: srv.URL, Threads: 2, Connections: 4, Rate: 200, Duration: time.Second,
		ScriptPath: "testdata/hotel-mixed.lua"})
	if res.Requests < 150 || res.Errors.Total() != 0 || res.StatusCodes[200] != res.Requests {
		t.Fatalf("requests %d, statuses %v, errors %+v", res.Requests, res.StatusCodes, res.Errors)
	}
	srv.mu.Lock()
	kinds := map[string]int{}
	for _, s := range srv.seen {
		path := checkHotelTarget(t, s.method, s.uri)
		if s.body != "" || s.header.Get("Content-Length") != "" || s.contentType != "" {
			t.Fatalf("%s %s carries a body or its headers: %+v", s.method, s.uri, s)
		}
		kinds[path]++
	}
	srv.mu.Unlock()
	if int64(len(srv.seen)) < res.Requests || kinds["/hotels"] <= kinds["/recommendations"] || kinds["/recommendations"] == 0 {
		t.Fatalf("server saw %v, result counts %d", kinds, res.Requests)
	}
	counts := map[string]int64{}
	var sum int64
	for _, e := range res.Endpoints {
		counts[e.Label] = e.Count
		sum += e.Count
		if method, path, _ := strings.Cut(e.Label, " "); hotelMethods[path] != method {
			t.Fatalf("endpoint %q is none of the four", e.Label)
		}
	}
	if counts["GET /hotels"] == 0 || counts["GET /recommendations"] == 0 || sum != res.Requests {
		t.Fatalf("endpoints %v (requests %d)", counts, res.Requests)
	}
}

// TestHotelScriptMix calls the script's request() directly, often enough
// that the two rare endpoints show up.
func TestHotelScriptMix(t *testing.T) {
	target, err := ParseTarget("http://127.0.0.1:8080/")
	if err != nil {
		t.Fatal(err)
	}
	s, err := LoadScript(ScriptOptions{Path: "testdata/hotel-mixed.lua", Target: target, Threads: 1})
	if err != nil {
		t.Fatalf("LoadScript: %v", err)
	}
	defer s.Close()
	ts := s.threads[0]
	const n = 20000
	kinds := map[string]int{}
	for range n {
		raw, _, err := ts.request(nil)
		if err != nil {
			t.Fatalf("request(): %v", err)
		}
		head, _, _ := strings.Cut(string(raw), "\r\n\r\n")
		lines := strings.Split(head, "\r\n")
		f := strings.Fields(lines[0])
		if len(f) != 3 || len(lines) != 2 || lines[1] != "Host: 127.0.0.1:8080" {
			t.Fatalf("request %q: want a request line and Host only", raw)
		}
		kinds[checkHotelTarget(t, f[0], f[1])]++
	}
	// 0.5 % of 20,000 is 100 each for the rare two.
	if kinds["/user"] < 50 || kinds["/reservation"] < 50 || kinds["/hotels"] < n/2 || kinds["/recommendations"] < n/3 {
		t.Fatalf("mix %v", kinds)
	}
	now := float64(time.Now().Unix())
	if cur, ok := ts.L.GetGlobal("cur_time").(lua.LNumber); !ok || float64(cur) < now-60 || float64(cur) > now+1 {
		t.Fatalf("global cur_time = %v, want about %v", ts.L.GetGlobal("cur_time"), now)
	}
}

func TestScriptToStringLikeLuaJIT(t *testing.T) {
	got := scriptRequests(t, `
request = function()
  local parts = {
    tostring(38.0235 + (24 - 240.5) / 1000.0), tostring(-122.095 + (29 - 157.0) / 1000.0),
    tostring(0.1 + 0.2), tostring(1 / 3), tostring(7), tostring(-0.5), tostring(1e15), tostring(2^53),
    tostring(123456789012345), tostring(1e-5), tostring(1 / 0), tostring(-1 / 0), tostring(undefined_global),
    tostring("s"), tostring(true), tostring(setmetatable({}, {__tostring = function() return "meta" end})),
  }
  return wrk.format("GET", "/" .. table.concat(parts, ","))
end`, 1, 1)
	want := "/37.807,-122.223,0.3,0.33333333333333,7,-0.5,1e+15,9.007199254741e+15," +
		"1.2345678901234e+14,1e-05,inf,-inf,nil,s,true,meta"
	if target := requestTarget(got[0][0]); target != want {
		t.Fatalf("tostring gave\n%s\nwant LuaJIT's\n%s", target, want)
	}
	if _, err := LoadScript(ScriptOptions{Source: `local x = tostring()`}); err == nil {
		t.Fatal("tostring() without an argument accepted")
	}
}
