//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/orchbench/orchbench/deathstarbench/hotelreservation"
	"github.com/orchbench/orchbench/deathstarbench/hotelreservation/dataset"
	"github.com/orchbench/orchbench/deathstarbench/hotelreservation/workload"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/testutil"
)

const (
	loginOK       = "Login successfully!"
	loginFailed   = "Failed. Please check your username and password. "
	reserveOK     = "Reserve successfully!"
	reserveFailed = "Failed. Already reserved. "
)

func TestHotelReservationEndToEnd(t *testing.T) {
	s := startStack(t)

	hotels := func(path string) []string {
		t.Helper()
		status, body := s.get(path)
		var fc struct {
			Type     string `json:"type"`
			Features []struct {
				ID string `json:"id"`
			} `json:"features"`
		}
		if status != 200 || json.Unmarshal([]byte(body), &fc) != nil || fc.Type != "FeatureCollection" || fc.Features == nil {
			t.Fatalf("%s: %d %q, want a FeatureCollection", path, status, body)
		}
		ids := []string{}
		for _, f := range fc.Features {
			ids = append(ids, f.ID)
		}
		return ids
	}
	message := func(path string) string {
		t.Helper()
		status, body := s.get(path)
		var m struct {
			Message string `json:"message"`
		}
		if status != 200 || json.Unmarshal([]byte(body), &m) != nil {
			t.Fatalf("%s: %d %q, want a message", path, status, body)
		}
		return m.Message
	}
	reserve := func(in, out, hotel string, rooms int, user int, password string) string {
		t.Helper()
		return message("/reservation?" + url.Values{
			"inDate": {in}, "outDate": {out}, "hotelId": {hotel}, "customerName": {dataset.Username(user)},
			"username": {dataset.Username(user)}, "password": {password}, "number": {strconv.Itoa(rooms)},
		}.Encode())
	}

	// The nearest hotels (geo: up to 5 within 10 km) that have a rate plan
	// (search) and a room (reservation), highest rate first; worked out by
	// hand in hotelreservation_test.go's TestGeoRuleOnTheSeed.
	for _, c := range []struct {
		what, lat, lon string
		want           []string
	}{
		// Geo: 1, 3, 5, 6, 2; with plans 1, 3 (109) and 2 (139).
		{"at hotel 1", "37.7867", "-122.4112", []string{"2", "1", "3"}},
		// Geo: 31, 32, 30, 33, 29 or 34; with plans 30 (109) and 33 (132).
		{"between hotels 31 and 32", "37.9725", "-122.158", []string{"33", "30"}},
		// Geo: 80, 79, 78 (77 is 10.4 km away); 78 has a plan (132).
		{"7.5 km past hotel 80", "38.3099", "-121.7081", []string{"78"}},
		{"no hotel within 10 km", "40", "-120", []string{}},
	} {
		path := "/hotels?inDate=2015-04-09&outDate=2015-04-10&lat=" + c.lat + "&lon=" + c.lon
		if got := hotels(path); !slices.Equal(got, c.want) {
			t.Errorf("hotels %s: %v, want %v", c.what, got, c.want)
		}
	}

	// Every hotel tied for best: rate 232 is hotels n ≡ 9 (mod 15); price
	// 120 is hotel 2 alone; by great-circle distance, the hotel at the point.
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"require=rate&lat=37.7867&lon=-122.4112", []string{"9", "24", "39", "54", "69"}},
		{"require=price&lat=37.7867&lon=-122.4112", []string{"2"}},
		{"require=dis&lat=37.7867&lon=-122.4112", []string{"1"}},
		{"require=dis&lat=37.7834&lon=-122.4071", []string{"3"}},
		{"require=dis&lat=40&lon=-120", []string{"80"}},
	} {
		if got := hotels("/recommendations?" + c.query); !slices.Equal(got, c.want) {
			t.Errorf("recommendations %s: %v, want %v", c.query, got, c.want)
		}
	}

	if got := message("/user?username=Cornell_42&password=" + dataset.Password(42)); got != loginOK {
		t.Errorf("Cornell_42's login: %q", got)
	}
	if got := message("/user?username=Cornell_42&password=" + dataset.Password(43)); got != loginFailed {
		t.Errorf("Cornell_42 with Cornell_43's password: %q", got)
	}

	// Hotel 7 has 300 rooms. Three nights in July, the middle one full.
	for i, c := range []struct {
		in, out  string
		rooms    int
		password string
		want     string
	}{
		{"2015-07-02", "2015-07-03", 100, dataset.Password(7), reserveOK},
		{"2015-07-01", "2015-07-04", 300, "wrong", loginFailed}, // books nothing
		{"2015-07-01", "2015-07-04", 200, dataset.Password(7), reserveOK},
		{"2015-07-01", "2015-07-04", 1, dataset.Password(7), reserveFailed}, // the 2nd is full
	} {
		if got := reserve(c.in, c.out, "7", c.rooms, 7, c.password); got != c.want {
			t.Fatalf("booking %d: %d rooms %s..%s: %q, want %q", i, c.rooms, c.in, c.out, got, c.want)
		}
	}

	const login = "&username=Cornell_1&password=1111111111"
	for _, c := range []struct{ path, want string }{
		{"/hotels?lat=37.7867&lon=-122.4112", "Please specify inDate/outDate params"},
		{"/hotels?inDate=2015-04-09&outDate=2015-04-10", "Please specify location params"},
		{"/recommendations?lat=37.7867&lon=-122.4112", "Please specify require params"},
		{"/user?username=Cornell_1", "Please specify username and password"},
		{"/reservation?inDate=2015-04-09&outDate=04-10-2015&hotelId=1&customerName=x" + login, "Please check inDate/outDate format (YYYY-MM-DD)"},
		{"/reservation?inDate=2015-04-09&outDate=2015-04-10&customerName=x" + login, "Please specify hotelId params"},
		{"/reservation?inDate=2015-04-09&outDate=2015-04-10&hotelId=1" + login, "Please specify customerName params"},
	} {
		if status, body := s.get(c.path); status != 400 || body != c.want+"\n" {
			t.Errorf("%s: %d %q, want 400 %q", c.path, status, body, c.want+"\n")
		}
	}

	verify := func(when string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := dataset.Verify(ctx, dataset.VerifyOptions{Frontend: s.frontend}); err != nil {
			t.Fatalf("dataset.Verify %s: %v", when, err)
		}
	}
	verify("on the new deployment")

	// The reservation service killed and started again: the nights it
	// counted are in FerretDB (memcached is flushed so nothing comes from
	// there).
	s.kill(hotelreservation.ServiceReservation)
	testutil.FlushMemcached(t, s.memcachedAddr)
	s.startServices(hotelreservation.ServiceReservation)
	if got := reserve("2015-07-02", "2015-07-03", "7", 1, 8, dataset.Password(8)); got != reserveFailed {
		t.Errorf("a room on the full night after the restart: %q, want %q", got, reserveFailed)
	}
	if got := reserve("2015-07-01", "2015-07-02", "7", 101, 8, dataset.Password(8)); got != reserveFailed {
		t.Errorf("101 rooms on a night with 100 left, after the restart: %q, want %q", got, reserveFailed)
	}
	if got := reserve("2015-07-01", "2015-07-02", "7", 100, 8, dataset.Password(8)); got != reserveOK {
		t.Errorf("the 100 rooms left, after the restart: %q, want %q", got, reserveOK)
	}

	// Every service started again seeds again: nothing is added.
	mongoClient, err := mongo.Connect(context.Background(), options.Client().ApplyURI(s.mongoURI))
	if err != nil {
		t.Fatal(err)
	}
	defer mongoClient.Disconnect(context.Background())
	before := countDocuments(t, mongoClient)
	for coll, want := range map[string]int64{
		"geo-db.geo": 80, "rate-db.inventory": 27, "profile-db.hotels": 80, "recommendation-db.recommendation": 80,
		"user-db.user": 501, "reservation-db.number": 80,
		// Alice's, and the three bookings that went through.
		"reservation-db.reservation": 4,
		// Alice's night, and hotel 7's three nights in July.
		"reservation-db.night": 4,
	} {
		if before[coll] != want {
			t.Errorf("%s holds %d documents, want %d", coll, before[coll], want)
		}
	}
	s.stopAll()
	testutil.FlushMemcached(t, s.memcachedAddr)
	s.startServices(hotelreservation.ServiceNames()...)
	if after := countDocuments(t, mongoClient); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("documents before restarting every service %v, after %v", before, after)
	}
	if got := reserve("2015-07-01", "2015-07-04", "7", 1, 9, dataset.Password(9)); got != reserveFailed {
		t.Errorf("a room on the full nights after restarting everything: %q, want %q", got, reserveFailed)
	}
	verify("after restarting every service")

	runMixedWorkload(t, s.frontend)
}

// countDocuments counts the documents of every collection the services
// seed or write, by database.collection.
func countDocuments(t *testing.T, client *mongo.Client) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	counts := map[string]int64{}
	for _, name := range []string{
		"geo-db.geo", "rate-db.inventory", "profile-db.hotels", "recommendation-db.recommendation",
		"user-db.user", "reservation-db.number", "reservation-db.reservation", "reservation-db.night",
	} {
		db, coll, _ := strings.Cut(name, ".")
		n, err := client.Database(db).Collection(coll).CountDocuments(ctx, bson.D{})
		if err != nil {
			t.Fatalf("count %s: %v", name, err)
		}
		counts[name] = n
	}
	return counts
}

// runMixedWorkload drives hotel-reservation:mixed at 50 requests/s for 5 s
// through a proxy that reads every answer: each must be 2xx with a body.
func runMixedWorkload(t *testing.T, frontend string) {
	t.Helper()
	var (
		mu       sync.Mutex
		answered int
		bad      []string
	)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, frontend+r.URL.RequestURI(), nil)
		resp, err := client.Do(req)
		if err != nil {
			mu.Lock()
			bad = append(bad, fmt.Sprintf("%s %s: %v", r.Method, r.URL.RequestURI(), err))
			mu.Unlock()
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		mu.Lock()
		answered++
		if err != nil || resp.StatusCode/100 != 2 || len(body) == 0 {
			bad = append(bad, fmt.Sprintf("%s %s: %d %q %v", r.Method, r.URL.RequestURI(), resp.StatusCode, testutil.Tail(string(body), 200), err))
		}
		mu.Unlock()
		w.WriteHeader(resp.StatusCode)
		w.Write(body)
	}))
	defer proxy.Close()

	w, err := workload.ByName("mixed")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := loadgen.Run(ctx, loadgen.Config{
		URL: proxy.URL, Threads: 1, Connections: 4, Rate: 50, Duration: 5 * time.Second,
		Timeout: 10 * time.Second, Workload: w, WorkloadName: "hotel-reservation:mixed", Seed: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("mixed: %d requests, status codes %v, endpoints %d", res.Requests, res.StatusCodes, len(res.Endpoints))
	if res.Requests < 225 || int64(answered) < res.Requests {
		t.Errorf("%d requests sent, %d answered through the proxy; want about 250", res.Requests, answered)
	}
	for code, n := range res.StatusCodes {
		if code/100 != 2 {
			t.Errorf("%d answers of status %d", n, code)
		}
	}
	if res.Errors.Total() != 0 {
		t.Errorf("errors: %+v", res.Errors)
	}
	if len(bad) > 0 {
		t.Errorf("%d bad answers, first: %s", len(bad), strings.Join(bad[:min(5, len(bad))], "\n"))
	}
	labels := map[string]bool{}
	for _, e := range res.Endpoints {
		labels[e.Label] = true
	}
	if !labels[workload.EndpointSearch] || !labels[workload.EndpointRecommend] {
		t.Errorf("endpoints %v: want searches and recommendations at least", labels)
	}
}
