package hotelreservation

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	hotelpb "github.com/orchbench/orchbench/deathstarbench/hotelreservation/proto"
)

// The front end's HTTP API is the original's: the same paths (any method),
// query parameters, JSON bodies and texts, and the same 400 texts for a
// missing parameter (http.Error's text/plain with a newline, as the
// original writes them). A failed upstream call is a 500 with the call's
// error, as in the original; bad input never is.
type frontend struct {
	search, profile, recommendation, user, reservation *upstream
	callTimeout                                        time.Duration
}

// Texts of the original's answers.
const (
	textLoginOK       = "Login successfully!"
	textLoginFailed   = "Failed. Please check your username and password. "
	textReserveOK     = "Reserve successfully!"
	textReserveFailed = "Failed. Already reserved. "

	textNeedDates    = "Please specify inDate/outDate params"
	textNeedLocation = "Please specify location params"
	textNeedRequire  = "Please specify require params"
	textNeedLogin    = "Please specify username and password"
	textDateFormat   = "Please check inDate/outDate format (YYYY-MM-DD)"
	textNeedHotel    = "Please specify hotelId params"
	textNeedCustomer = "Please specify customerName params"
)

func newFrontend(settings Settings, up *upstreamSet) (http.Handler, error) {
	f := &frontend{callTimeout: settings.CallTimeout}
	var errs []error
	for name, into := range map[string]**upstream{
		ServiceSearch: &f.search, ServiceProfile: &f.profile, ServiceRecommendation: &f.recommendation,
		ServiceUser: &f.user, ServiceReservation: &f.reservation,
	} {
		u, err := up.get(name)
		errs = append(errs, err)
		*into = u
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/hotels", f.hotels)
	mux.HandleFunc("/recommendations", f.recommendations)
	mux.HandleFunc("/user", f.login)
	mux.HandleFunc("/reservation", f.reserve)
	// Ours, for health checks: the process serves.
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	return mux, nil
}

func (f *frontend) context(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), f.callTimeout)
}

// parseFloat reads a coordinate as the original does: an unparsable one is 0.
func parseFloat(s string, bits int) float64 {
	v, _ := strconv.ParseFloat(s, bits)
	return v
}

// GET|POST /hotels?inDate&outDate&lat&lon[&locale]: the hotels near the
// point that have a rate plan and a room every night, with their profiles.
func (f *frontend) hotels(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	q := r.URL.Query()
	inDate, outDate := q.Get("inDate"), q.Get("outDate")
	if inDate == "" || outDate == "" {
		http.Error(w, textNeedDates, http.StatusBadRequest)
		return
	}
	lat, lon := q.Get("lat"), q.Get("lon")
	if lat == "" || lon == "" {
		http.Error(w, textNeedLocation, http.StatusBadRequest)
		return
	}
	ctx, cancel := f.context(r)
	defer cancel()
	found, err := hotelpb.NewSearchClient(f.search.conn()).Nearby(ctx, &hotelpb.SearchRequest{
		Lat: float32(parseFloat(lat, 32)), Lon: float32(parseFloat(lon, 32)), InDate: inDate, OutDate: outDate,
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	available, err := hotelpb.NewReservationClient(f.reservation.conn()).CheckAvailability(ctx, &hotelpb.ReservationRequest{
		HotelIds: found.GetHotelIds(), InDate: inDate, OutDate: outDate, RoomNumber: 1,
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	f.writeProfiles(ctx, w, available.GetHotelIds(), q.Get("locale"))
}

// GET|POST /recommendations?require=dis|rate|price&lat&lon[&locale].
func (f *frontend) recommendations(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	q := r.URL.Query()
	lat, lon := q.Get("lat"), q.Get("lon")
	if lat == "" || lon == "" {
		http.Error(w, textNeedLocation, http.StatusBadRequest)
		return
	}
	require := q.Get("require")
	if require != "dis" && require != "rate" && require != "price" {
		http.Error(w, textNeedRequire, http.StatusBadRequest)
		return
	}
	ctx, cancel := f.context(r)
	defer cancel()
	recommended, err := hotelpb.NewRecommendationClient(f.recommendation.conn()).GetRecommendations(ctx, &hotelpb.RecommendationRequest{
		Require: require, Lat: parseFloat(lat, 64), Lon: parseFloat(lon, 64),
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	f.writeProfiles(ctx, w, recommended.GetHotelIds(), q.Get("locale"))
}

func (f *frontend) writeProfiles(ctx context.Context, w http.ResponseWriter, hotelIDs []string, locale string) {
	if locale == "" {
		locale = "en"
	}
	profiles, err := hotelpb.NewProfileClient(f.profile.conn()).GetProfiles(ctx, &hotelpb.ProfileRequest{HotelIds: hotelIDs, Locale: locale})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	json.NewEncoder(w).Encode(featureCollection(profiles.GetHotels()))
}

// GET|POST /user?username&password.
func (f *frontend) login(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	q := r.URL.Query()
	username, password := q.Get("username"), q.Get("password")
	if username == "" || password == "" {
		http.Error(w, textNeedLogin, http.StatusBadRequest)
		return
	}
	ctx, cancel := f.context(r)
	defer cancel()
	checked, err := hotelpb.NewUserClient(f.user.conn()).CheckUser(ctx, &hotelpb.UserRequest{Username: username, Password: password})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	text := textLoginOK
	if !checked.GetCorrect() {
		text = textLoginFailed
	}
	json.NewEncoder(w).Encode(message{text})
}

// GET|POST /reservation?inDate&outDate&hotelId&customerName&username&password[&number].
// Unlike the original, which booked the rooms whatever the login's
// outcome, a failed login books nothing.
func (f *frontend) reserve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	q := r.URL.Query()
	inDate, outDate := q.Get("inDate"), q.Get("outDate")
	if inDate == "" || outDate == "" {
		http.Error(w, textNeedDates, http.StatusBadRequest)
		return
	}
	if !dateShaped(inDate) || !dateShaped(outDate) || !validDate(inDate) || !validDate(outDate) {
		http.Error(w, textDateFormat, http.StatusBadRequest)
		return
	}
	hotelID := q.Get("hotelId")
	if hotelID == "" {
		http.Error(w, textNeedHotel, http.StatusBadRequest)
		return
	}
	customer := q.Get("customerName")
	if customer == "" {
		http.Error(w, textNeedCustomer, http.StatusBadRequest)
		return
	}
	username, password := q.Get("username"), q.Get("password")
	if username == "" || password == "" {
		http.Error(w, textNeedLogin, http.StatusBadRequest)
		return
	}
	// As the original: an absent or unparsable number books 0 rooms.
	rooms, _ := strconv.Atoi(q.Get("number"))

	ctx, cancel := f.context(r)
	defer cancel()
	checked, err := hotelpb.NewUserClient(f.user.conn()).CheckUser(ctx, &hotelpb.UserRequest{Username: username, Password: password})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if !checked.GetCorrect() {
		json.NewEncoder(w).Encode(message{textLoginFailed})
		return
	}
	booked, err := hotelpb.NewReservationClient(f.reservation.conn()).MakeReservation(ctx, &hotelpb.ReservationRequest{
		CustomerName: customer, HotelIds: []string{hotelID}, InDate: inDate, OutDate: outDate, RoomNumber: int32(rooms),
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	text := textReserveOK
	if len(booked.GetHotelIds()) == 0 {
		text = textReserveFailed
	}
	json.NewEncoder(w).Encode(message{text})
}

// dateShaped is the original's check: ten characters, digits with dashes
// at 4 and 7.
func dateShaped(date string) bool {
	if len(date) != 10 {
		return false
	}
	for i := range 10 {
		if i == 4 || i == 7 {
			if date[i] != '-' {
				return false
			}
		} else if date[i] < '0' || date[i] > '9' {
			return false
		}
	}
	return true
}

// validDate refuses a date-shaped text that is no date (2015-13-45), which
// the original let through to book no night at all.
func validDate(date string) bool {
	_, err := time.Parse(time.DateOnly, date)
	return err == nil
}

type message struct {
	Message string `json:"message"`
}

// The GeoJSON the original answers, field for field in the order its
// maps encoded (sorted keys), coordinates as float32 [lon, lat].
type feature struct {
	Geometry   geometry   `json:"geometry"`
	ID         string     `json:"id"`
	Properties properties `json:"properties"`
	Type       string     `json:"type"`
}

type geometry struct {
	Coordinates [2]float32 `json:"coordinates"`
	Type        string     `json:"type"`
}

type properties struct {
	Name        string `json:"name"`
	PhoneNumber string `json:"phone_number"`
}

type collection struct {
	Features []feature `json:"features"`
	Type     string    `json:"type"`
}

func featureCollection(hotels []*hotelpb.Hotel) collection {
	out := collection{Features: make([]feature, 0, len(hotels)), Type: "FeatureCollection"}
	for _, h := range hotels {
		out.Features = append(out.Features, feature{
			Geometry:   geometry{Coordinates: [2]float32{h.GetAddress().GetLon(), h.GetAddress().GetLat()}, Type: "Point"},
			ID:         h.GetId(),
			Properties: properties{Name: h.GetName(), PhoneNumber: h.GetPhoneNumber()},
			Type:       "Feature",
		})
	}
	return out
}
