package hotelreservation

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/bson"

	"github.com/orchbench/orchbench/deathstarbench/hotelreservation/dataset"
	hotelpb "github.com/orchbench/orchbench/deathstarbench/hotelreservation/proto"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

// startMemory runs every service in this process on in-memory stores until
// the test ends and returns the front end's base URL.
func startMemory(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := Start(ctx, ServiceNames(), map[string]string{ServiceFrontend: "127.0.0.1:0"}, Settings{
		StorageMode: "memory",
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return "http://" + r.Addrs[ServiceFrontend]
}

type reply struct {
	status      int
	contentType string
	body        string
}

func get(t *testing.T, base, path string) reply {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header.Get("Content-Type"), string(body)}
}

// hotelIDs decodes a FeatureCollection answer into its hotels' IDs.
func hotelIDs(t *testing.T, r reply) []string {
	t.Helper()
	var fc struct {
		Type     string `json:"type"`
		Features []struct {
			ID string `json:"id"`
		} `json:"features"`
	}
	if r.status != 200 || json.Unmarshal([]byte(r.body), &fc) != nil || fc.Type != "FeatureCollection" || fc.Features == nil {
		t.Fatalf("want a 200 FeatureCollection, got %d %q", r.status, r.body)
	}
	ids := []string{}
	for _, f := range fc.Features {
		ids = append(ids, f.ID)
	}
	return ids
}

func messageOf(t *testing.T, r reply) string {
	t.Helper()
	var m struct {
		Message string `json:"message"`
	}
	if r.status != 200 || json.Unmarshal([]byte(r.body), &m) != nil {
		t.Fatalf("want a 200 message, got %d %q", r.status, r.body)
	}
	return m.Message
}

func seededIndex() *geoIndex {
	var points []geoPoint
	for _, p := range dataset.Points() {
		points = append(points, geoPoint{id: p.HotelID, lat: p.Lat, lon: p.Lon})
	}
	return newGeoIndex(points)
}

func pointIDs(points []geoPoint) []string {
	ids := []string{}
	for _, p := range points {
		ids = append(ids, p.id)
	}
	return ids
}

// The seeded hotels, each case worked out by hand from the rule in
// geoindex.go (cells of 1/222 degree of latitude and 1/170 of longitude).
func TestGeoRuleOnTheSeed(t *testing.T) {
	idx := seededIndex()
	nearest := func(lat, lon float64) []string {
		return pointIDs(idx.nearest(lat, lon, nearbyMaxResults, nearbyRadiusM))
	}

	// At hotel 1, cell (28368, 9790): hotel 3 shares the cell (389 m),
	// 2 and 6 are in ring 1 (953 m, 855 m), 5 in ring 2 (727 m), 4 in
	// ring 3, 7 in ring 9 and 8 in ring 11, the sixth in the rings: the
	// search stops there and keeps the five nearest.
	if got, want := nearest(37.7867, -122.4112), []string{"1", "3", "5", "6", "2"}; !slices.Equal(got, want) {
		t.Errorf("at hotel 1: %v, want %v", got, want)
	}
	// Nothing within 10 km: every hotel is around San Francisco.
	if got := nearest(40, -120); len(got) != 0 {
		t.Errorf("at 40, -120: %v, want none", got)
	}
	// Midway between hotels 31 and 32 on the generated line (hotels 969 m
	// apart): 31 and 32 at 485 m, 30 and 33 at 1454 m, then 29 or 34 at
	// 2423 m (a tie the flat distance's rounding settles).
	got := nearest(37.9725, -122.158)
	if len(got) != 5 || !sameSet(got[:2], []string{"31", "32"}) || !sameSet(got[2:4], []string{"30", "33"}) ||
		(got[4] != "29" && got[4] != "34") {
		t.Errorf("between hotels 31 and 32: %v, want 31 and 32, 30 and 33, then 29 or 34", got)
	}
	// 7.5 km past hotel 80 along the line: 80 at 7.5 km, 79 at 8.5, 78
	// at 9.4; 77 at 10.4 km is cut by the radius.
	if got, want := nearest(38.3099, -121.7081), []string{"80", "79", "78"}; !slices.Equal(got, want) {
		t.Errorf("past hotel 80: %v, want %v", got, want)
	}
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// A synthetic index where the ring search stops early, and the same index
// with one point fewer, where it does not.
func TestGeoRuleRingsStopEarly(t *testing.T) {
	// The query sits 1.1 m below the top of its latitude cell 28859 (lat
	// 40 is exactly where cell 28860 starts), in longitude cell 10199.
	const lat, lon = 40 - 0.00001, -120.001
	// Six points at the far (south) side of the cell below, ring 1, about
	// 988 m away, each a little further west than the last.
	var far []geoPoint
	for i, dLon := range []float64{0, 0.0005, 0.001, 0.0015, 0.002, 0.0025} {
		far = append(far, geoPoint{id: "far" + strconv.Itoa(i), lat: 39.9911, lon: lon - dLon})
	}
	// One point just into cell 28861, ring 2, only 512 m away.
	near := geoPoint{id: "near", lat: 40.0046, lon: lon}

	// Six points in ring 1 are more than five: the search stops there, and
	// the nearest point is never looked at.
	got := pointIDs(newGeoIndex(append(slices.Clone(far), near)).nearest(lat, lon, 5, 10000))
	if want := []string{"far0", "far1", "far2", "far3", "far4"}; !slices.Equal(got, want) {
		t.Errorf("six in ring 1: %v, want %v (the ring search stops before the nearest)", got, want)
	}
	// With five there, ring 2 is searched too.
	got = pointIDs(newGeoIndex(append(slices.Clone(far[:5]), near)).nearest(lat, lon, 5, 10000))
	if want := []string{"near", "far0", "far1", "far2", "far3"}; !slices.Equal(got, want) {
		t.Errorf("five in ring 1: %v, want %v", got, want)
	}

	// The radius is a great-circle one: 0.0899 degrees of latitude is
	// 9996.5 m, 0.0901 degrees 10018.7 m.
	edge := newGeoIndex([]geoPoint{{id: "in", lat: 10.0899, lon: 20}, {id: "out", lat: 10.0901, lon: 20}})
	if got, want := pointIDs(edge.nearest(10, 20, 5, 10000)), []string{"in"}; !slices.Equal(got, want) {
		t.Errorf("at the radius: %v, want %v", got, want)
	}
}

// Hotel 3 is at latitude 37.7854 in the original's geo seed but 37.7834 in
// its profile and recommendation seeds; the port had put it at 37.7834 in
// the geo index too.
func TestHotel3GeoPosition(t *testing.T) {
	if got := dataset.Points()[2]; got.HotelID != "3" || got.Lat != 37.7854 || got.Lon != -122.4071 {
		t.Errorf("geo point of hotel 3: %+v, want 37.7854, -122.4071", got)
	}
	if got := dataset.Profiles()[2].Address; got.Lat != float32(37.7834) || got.Lon != float32(-122.4071) {
		t.Errorf("profile of hotel 3 at %v, %v, want 37.7834, -122.4071", got.Lat, got.Lon)
	}
	if got := dataset.Recommendables()[2]; got.Lat != 37.7834 || got.Lon != -122.4071 {
		t.Errorf("recommendation entry of hotel 3: %+v, want 37.7834, -122.4071", got)
	}
	// Within 100 m of its geo position, geo finds it.
	if got := pointIDs(seededIndex().nearest(37.7854, -122.4071, 1, 100)); !slices.Equal(got, []string{"3"}) {
		t.Errorf("within 100 m of 37.7854, -122.4071: %v, want [3]", got)
	}
}

func reservationPath(in, out, hotel string, rooms int, username, password string) string {
	return "/reservation?" + url.Values{
		"inDate": {in}, "outDate": {out}, "hotelId": {hotel}, "customerName": {"tester"},
		"username": {username}, "password": {password}, "number": {strconv.Itoa(rooms)},
	}.Encode()
}

const (
	reserveOK     = "Reserve successfully!"
	reserveFailed = "Failed. Already reserved. "
	loginFailed   = "Failed. Please check your username and password. "
)

// Hotel 7 has 300 rooms a night. Over a stay of three nights only the
// full one refuses a booking.
func TestReservationCapacity(t *testing.T) {
	base := startMemory(t)
	user, password := dataset.Username(1), dataset.Password(1)
	reserve := func(in, out string, rooms int) string {
		t.Helper()
		return messageOf(t, get(t, base, reservationPath(in, out, "7", rooms, user, password)))
	}
	steps := []struct {
		in, out string
		rooms   int
		want    string
	}{
		{"2015-05-02", "2015-05-03", 100, reserveOK},     // nights 1,2,3: 0, 100, 0
		{"2015-05-01", "2015-05-04", 200, reserveOK},     // 200, 300 (the last room), 200
		{"2015-05-01", "2015-05-04", 1, reserveFailed},   // the second night is full
		{"2015-05-01", "2015-05-02", 100, reserveOK},     // the first night's last 100
		{"2015-05-01", "2015-05-02", 1, reserveFailed},   // now full too
		{"2015-05-03", "2015-05-04", 101, reserveFailed}, // one more than the third night has
		{"2015-05-03", "2015-05-04", 100, reserveOK},     // exactly what it has
		{"2015-05-04", "2015-05-05", 300, reserveOK},     // the night after the stay is free
		{"2015-05-04", "2015-05-05", 1, reserveFailed},
	}
	for i, s := range steps {
		if got := reserve(s.in, s.out, s.rooms); got != s.want {
			t.Fatalf("step %d: %d rooms %s..%s: %q, want %q", i, s.rooms, s.in, s.out, got, s.want)
		}
	}
}

// A negative number of rooms is refused; the original booked it, and the
// night's count went down, so the full night took more bookings.
func TestReservationRefusesNegativeRooms(t *testing.T) {
	base := startMemory(t)
	user, password := dataset.Username(2), dataset.Password(2)
	reserve := func(rooms int) string {
		t.Helper()
		return messageOf(t, get(t, base, reservationPath("2015-05-10", "2015-05-11", "7", rooms, user, password)))
	}
	if got := reserve(300); got != reserveOK {
		t.Fatalf("300 rooms: %q", got)
	}
	if got := reserve(-300); got != reserveFailed {
		t.Fatalf("-300 rooms: %q, want %q", got, reserveFailed)
	}
	if got := reserve(1); got != reserveFailed {
		t.Fatalf("1 room on the full night after -300: %q, want %q (the negative booking freed rooms)", got, reserveFailed)
	}
}

// A login that fails books nothing.
func TestReservationNeedsALogin(t *testing.T) {
	base := startMemory(t)
	if got := messageOf(t, get(t, base, reservationPath("2015-06-01", "2015-06-02", "7", 300, "Cornell_1", "wrong"))); got != loginFailed {
		t.Fatalf("wrong password: %q, want %q", got, loginFailed)
	}
	if got := messageOf(t, get(t, base, reservationPath("2015-06-01", "2015-06-02", "7", 300, "Cornell_1", dataset.Password(1)))); got != reserveOK {
		t.Fatalf("all 300 rooms after a failed login: %q, want %q", got, reserveOK)
	}
}

// A hotel without a free room some night of the stay is no search result.
func TestAvailabilityExcludesAFullHotel(t *testing.T) {
	base := startMemory(t)
	search := func(in, out string) []string {
		return hotelIDs(t, get(t, base, "/hotels?inDate="+in+"&outDate="+out+"&lat=37.7867&lon=-122.4112"))
	}
	if got, want := search("2015-04-09", "2015-04-10"), []string{"2", "1", "3"}; !slices.Equal(got, want) {
		t.Fatalf("before: %v, want %v", got, want)
	}
	// Hotel 1 has 200 rooms.
	if got := messageOf(t, get(t, base, reservationPath("2015-04-09", "2015-04-10", "1", 200, "Cornell_3", dataset.Password(3)))); got != reserveOK {
		t.Fatalf("booking hotel 1's 200 rooms: %q", got)
	}
	if got, want := search("2015-04-09", "2015-04-10"), []string{"2", "3"}; !slices.Equal(got, want) {
		t.Errorf("hotel 1 full: %v, want %v", got, want)
	}
	if got, want := search("2015-04-08", "2015-04-11"), []string{"2", "3"}; !slices.Equal(got, want) {
		t.Errorf("a stay over the full night: %v, want %v", got, want)
	}
	if got, want := search("2015-04-10", "2015-04-11"), []string{"2", "1", "3"}; !slices.Equal(got, want) {
		t.Errorf("the night after: %v, want %v", got, want)
	}
}

func TestRecommendationsAndLogins(t *testing.T) {
	base := startMemory(t)
	for _, c := range []struct {
		path string
		want []string
	}{
		{"/recommendations?require=rate&lat=37.7867&lon=-122.4112", []string{"9", "24", "39", "54", "69"}},
		{"/recommendations?require=price&lat=37.7867&lon=-122.4112", []string{"2"}},
		{"/recommendations?require=dis&lat=37.7867&lon=-122.4112", []string{"1"}},
		// 37.7834 is hotel 3 in the recommendation seed, not 37.7854.
		{"/recommendations?require=dis&lat=37.7834&lon=-122.4071", []string{"3"}},
		// Nearest to 40, -120 by the great circle: the far end of the line.
		{"/recommendations?require=dis&lat=40&lon=-120", []string{"80"}},
	} {
		if got := hotelIDs(t, get(t, base, c.path)); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.path, got, c.want)
		}
	}
	for _, c := range []struct{ path, want string }{
		{"/user?username=Cornell_0&password=0000000000", "Login successfully!"},
		{"/user?username=Cornell_500&password=" + dataset.Password(500), "Login successfully!"},
		{"/user?username=Cornell_5&password=5555555550", loginFailed},
		{"/user?username=Cornell_501&password=" + dataset.Password(501), loginFailed},
	} {
		if got := messageOf(t, get(t, base, c.path)); got != c.want {
			t.Errorf("%s: %q, want %q", c.path, got, c.want)
		}
	}
}

func TestMissingParameters(t *testing.T) {
	base := startMemory(t)
	const dates = "inDate=2015-04-09&outDate=2015-04-10"
	const login = "&username=Cornell_1&password=1111111111"
	for _, c := range []struct{ path, want string }{
		{"/hotels", "Please specify inDate/outDate params"},
		{"/hotels?inDate=2015-04-09&lat=37.7867&lon=-122.4112", "Please specify inDate/outDate params"},
		{"/hotels?" + dates, "Please specify location params"},
		{"/hotels?" + dates + "&lat=37.7867", "Please specify location params"},
		{"/recommendations?require=rate", "Please specify location params"},
		{"/recommendations?lat=37.7867&lon=-122.4112", "Please specify require params"},
		{"/recommendations?require=cheap&lat=37.7867&lon=-122.4112", "Please specify require params"},
		{"/user", "Please specify username and password"},
		{"/user?username=Cornell_1", "Please specify username and password"},
		{"/reservation?hotelId=1&customerName=x" + login, "Please specify inDate/outDate params"},
		{"/reservation?inDate=2015-4-9&outDate=2015-04-10&hotelId=1&customerName=x" + login, "Please check inDate/outDate format (YYYY-MM-DD)"},
		{"/reservation?inDate=2015-13-45&outDate=2015-04-10&hotelId=1&customerName=x" + login, "Please check inDate/outDate format (YYYY-MM-DD)"},
		{"/reservation?" + dates + "&customerName=x" + login, "Please specify hotelId params"},
		{"/reservation?" + dates + "&hotelId=1" + login, "Please specify customerName params"},
		{"/reservation?" + dates + "&hotelId=1&customerName=x&username=Cornell_1", "Please specify username and password"},
	} {
		got := get(t, base, c.path)
		if got.status != http.StatusBadRequest || got.body != c.want+"\n" || got.contentType != "text/plain; charset=utf-8" {
			t.Errorf("%s: %d %q (%s), want 400 %q as text/plain", c.path, got.status, got.body, got.contentType, c.want+"\n")
		}
	}
}

// Coordinates that do not parse are 0, as in the original: no hotel is
// near 0, 0, so the answer is an empty collection, not an error.
func TestBadCoordinatesAnswerAnEmptyCollection(t *testing.T) {
	base := startMemory(t)
	for _, path := range []string{
		"/hotels?inDate=2015-04-09&outDate=2015-04-10&lat=abc&lon=def",
		"/hotels?inDate=2015-04-09&outDate=2015-04-10&lat=nil&lon=-122.4112",
	} {
		got := get(t, base, path)
		if got.status != 200 || got.body != `{"features":[],"type":"FeatureCollection"}`+"\n" {
			t.Errorf("%s: %d %q, want 200 and an empty FeatureCollection", path, got.status, got.body)
		}
	}
}

// The bytes of an answer: keys in the original's order (its maps encoded
// with sorted keys), coordinates [lon, lat] printed as float32.
func TestHotelsJSONBytes(t *testing.T) {
	base := startMemory(t)
	got := get(t, base, "/hotels?inDate=2015-04-09&outDate=2015-04-10&lat=37.7867&lon=-122.4112")
	want := `{"features":[` +
		`{"geometry":{"coordinates":[-122.4005,37.7854],"type":"Point"},"id":"2","properties":{"name":"W San Francisco","phone_number":"(415) 777-5300"},"type":"Feature"},` +
		`{"geometry":{"coordinates":[-122.4112,37.7867],"type":"Point"},"id":"1","properties":{"name":"Clift Hotel","phone_number":"(415) 775-4700"},"type":"Feature"},` +
		`{"geometry":{"coordinates":[-122.4071,37.7834],"type":"Point"},"id":"3","properties":{"name":"Hotel Zetta","phone_number":"(415) 543-8555"},"type":"Feature"}` +
		`],"type":"FeatureCollection"}` + "\n"
	if got.status != 200 || got.body != want {
		t.Fatalf("got %d\n%s\nwant\n%s", got.status, got.body, want)
	}
	// A generated hotel's float32 position prints as float32 does.
	got = get(t, base, "/recommendations?require=dis&lat=37.8375&lon=-122.338")
	want = `{"features":[{"geometry":{"coordinates":[-122.338005,37.8375],"type":"Point"},"id":"9","properties":{"name":"St. Regis San Francisco","phone_number":"(415) 284-409"},"type":"Feature"}],"type":"FeatureCollection"}` + "\n"
	if got.status != 200 || got.body != want {
		t.Fatalf("got %d\n%s\nwant\n%s", got.status, got.body, want)
	}
}

func count(t *testing.T, coll store.Collection) int {
	t.Helper()
	var docs []bson.M
	if err := coll.All(context.Background(), &docs); err != nil {
		t.Fatal(err)
	}
	return len(docs)
}

// Every service seeds by inserting what is missing: a second seeding, as
// a restart or a replica does, adds nothing.
func TestSeedingTwiceAddsNothing(t *testing.T) {
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	res := &reservationService{
		reservations: store.NewMemoryCollection(), nights: store.NewMemoryCollection(),
		capacities: store.NewMemoryCollection(), cache: store.NewMemoryCache(), logger: logger,
	}
	seeds := []struct {
		name string
		seed func(store.Collection) error
		coll store.Collection
		want int
	}{
		{"geo", func(c store.Collection) error { return (&geoService{}).load(ctx, c) }, store.NewMemoryCollection(), 80},
		{"rate plans (one document per hotel with plans)", func(c store.Collection) error { return seedRatePlans(ctx, c) }, store.NewMemoryCollection(), 27},
		{"profiles", func(c store.Collection) error { return seedProfiles(ctx, c) }, store.NewMemoryCollection(), 80},
		{"recommendations", func(c store.Collection) error { return (&recommendationService{}).load(ctx, c) }, store.NewMemoryCollection(), 80},
		{"users", func(c store.Collection) error { return (&userService{}).load(ctx, c) }, store.NewMemoryCollection(), 501},
		{"reservation", func(store.Collection) error { return res.seed(ctx) }, res.reservations, 1},
	}
	for _, s := range seeds {
		for round := 1; round <= 2; round++ {
			if err := s.seed(s.coll); err != nil {
				t.Fatalf("%s, round %d: %v", s.name, round, err)
			}
			if got := count(t, s.coll); got != s.want {
				t.Errorf("%s after seeding %d times: %d documents, want %d", s.name, round, got, s.want)
			}
		}
	}
	if got := count(t, res.capacities); got != 80 {
		t.Errorf("capacities: %d, want 80", got)
	}
	if got := count(t, res.nights); got != 1 {
		t.Errorf("nights: %d, want 1 (Alice's)", got)
	}
	var night nightDoc
	if err := res.nights.Get(ctx, nightID("4", "2015-04-09"), &night); err != nil || night.Rooms != 1 {
		t.Errorf("hotel 4's night of 2015-04-09: %+v, %v; want 1 room", night, err)
	}
}

// A second seeding leaves bookings made since alone: the night's count is
// not reset to the seeded reservation's.
func TestSeedingKeepsBookings(t *testing.T) {
	ctx := context.Background()
	s := &reservationService{
		reservations: store.NewMemoryCollection(), nights: store.NewMemoryCollection(),
		capacities: store.NewMemoryCollection(), cache: store.NewMemoryCache(),
		logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if err := s.seed(ctx); err != nil {
		t.Fatal(err)
	}
	booked, err := s.MakeReservation(ctx, reservationRequest("4", "2015-04-09", "2015-04-10", 5))
	if err != nil || len(booked.GetHotelIds()) != 1 {
		t.Fatalf("booking: %v, %v", booked, err)
	}
	if err := s.seed(ctx); err != nil {
		t.Fatal(err)
	}
	var night nightDoc
	if err := s.nights.Get(ctx, nightID("4", "2015-04-09"), &night); err != nil || night.Rooms != 6 {
		t.Errorf("hotel 4's night of 2015-04-09 after seeding again: %+v, %v; want 6 rooms", night, err)
	}
	if got := count(t, s.reservations); got != 2 {
		t.Errorf("reservations: %d, want 2", got)
	}
}

func reservationRequest(hotel, in, out string, rooms int32) *hotelpb.ReservationRequest {
	return &hotelpb.ReservationRequest{CustomerName: "tester", HotelIds: []string{hotel}, InDate: in, OutDate: out, RoomNumber: rooms}
}
