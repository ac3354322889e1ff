// Package dataset is the hotel reservation's seed: the 80 hotels (profiles,
// geo points, recommendation attributes, rate plans, room capacities), the
// 501 users and the one reservation that DeathStarBench's hotel reservation
// writes into its databases at start. The figures are the original's; the
// services write them idempotently (insert what is missing) and the
// verifier reads them back through the HTTP API.
package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// Sizes of the seed.
const (
	Hotels = 80
	// Users are Cornell_0 .. Cornell_500: 501 names, as the wrk2 script draws
	// math.random(0, 500).
	Users = 501
	// UserPrefix starts every user name.
	UserPrefix = "Cornell_"
)

// Address is a hotel's postal address and position as its profile holds it
// (float32, as the original's profile does).
type Address struct {
	StreetNumber string  `bson:"streetNumber" json:"streetNumber"`
	StreetName   string  `bson:"streetName" json:"streetName"`
	City         string  `bson:"city" json:"city"`
	State        string  `bson:"state" json:"state"`
	Country      string  `bson:"country" json:"country"`
	PostalCode   string  `bson:"postalCode" json:"postalCode"`
	Lat          float32 `bson:"lat" json:"lat"`
	Lon          float32 `bson:"lon" json:"lon"`
}

// Profile is what the profile service answers for a hotel.
type Profile struct {
	ID          string  `bson:"id" json:"id"`
	Name        string  `bson:"name" json:"name"`
	PhoneNumber string  `bson:"phoneNumber" json:"phoneNumber"`
	Description string  `bson:"description" json:"description"`
	Address     Address `bson:"address" json:"address"`
}

// Point is a hotel's position in the geo service's index.
type Point struct {
	HotelID string  `bson:"hotelId"`
	Lat     float64 `bson:"lat"`
	Lon     float64 `bson:"lon"`
}

// Recommendable is what the recommendation service ranks a hotel by.
type Recommendable struct {
	HotelID string  `bson:"hotelId"`
	Lat     float64 `bson:"lat"`
	Lon     float64 `bson:"lon"`
	Rate    float64 `bson:"rate"`
	Price   float64 `bson:"price"`
}

// RoomType is a rate plan's room and prices.
type RoomType struct {
	BookableRate       float64 `bson:"bookableRate" json:"bookableRate"`
	Code               string  `bson:"code" json:"code"`
	RoomDescription    string  `bson:"roomDescription" json:"roomDescription"`
	TotalRate          float64 `bson:"totalRate" json:"totalRate"`
	TotalRateInclusive float64 `bson:"totalRateInclusive" json:"totalRateInclusive"`
}

// RatePlan is one rate of a hotel.
type RatePlan struct {
	HotelID  string   `bson:"hotelId" json:"hotelId"`
	Code     string   `bson:"code" json:"code"`
	InDate   string   `bson:"inDate" json:"inDate"`
	OutDate  string   `bson:"outDate" json:"outDate"`
	RoomType RoomType `bson:"roomType" json:"roomType"`
}

// Capacity is a hotel's rooms per night.
type Capacity struct {
	HotelID string `bson:"hotelId"`
	Rooms   int    `bson:"numberOfRoom"`
}

// Reservation is rooms booked by a customer for the nights from InDate up
// to (not including) OutDate.
type Reservation struct {
	HotelID      string `bson:"hotelId"`
	CustomerName string `bson:"customerName"`
	InDate       string `bson:"inDate"`
	OutDate      string `bson:"outDate"`
	Rooms        int    `bson:"number"`
}

// User is a login; Password is the hex SHA-256 of the password.
type User struct {
	Username string `bson:"username"`
	Password string `bson:"password"`
}

// HotelID is hotel n's ID, its decimal number (1..80).
func HotelID(n int) string { return strconv.Itoa(n) }

// generatedLat and generatedLon place hotels 7..80 on the original's line
// north-east of downtown San Francisco.
func generatedLat(n int) float64 { return 37.7835 + float64(n)/500.0*3 }
func generatedLon(n int) float64 { return -122.41 + float64(n)/500.0*4 }

type namedHotel struct {
	name, phone, description, streetNumber, streetName, postalCode string
	lat, lon                                                       float64
}

const stRegisDescription = "St. Regis Museum Tower is a 42-story, 484 ft skyscraper in the South of Market district of San Francisco, California, adjacent to Yerba Buena Gardens, Moscone Center, PacBell Building and the San Francisco Museum of Modern Art."

// The six hotels the original names; the other 74 copy the sixth's profile
// with their own phone number and position.
var namedHotels = [6]namedHotel{
	{"Clift Hotel", "(415) 775-4700", "A 6-minute walk from Union Square and 4 minutes from a Muni Metro station, this luxury hotel designed by Philippe Starck features an artsy furniture collection in the lobby, including work by Salvador Dali.", "495", "Geary St", "94102", 37.7867, -122.4112},
	{"W San Francisco", "(415) 777-5300", "Less than a block from the Yerba Buena Center for the Arts, this trendy hotel is a 12-minute walk from Union Square.", "181", "3rd St", "94103", 37.7854, -122.4005},
	{"Hotel Zetta", "(415) 543-8555", "A 3-minute walk from the Powell Street cable-car turnaround and BART rail station, this hip hotel 9 minutes from Union Square combines high-tech lodging with artsy touches.", "55", "5th St", "94103", 37.7834, -122.4071},
	{"Hotel Vitale", "(415) 278-3700", "This waterfront hotel with Bay Bridge views is 3 blocks from the Financial District and a 4-minute walk from the Ferry Building.", "8", "Mission St", "94105", 37.7936, -122.3930},
	{"Phoenix Hotel", "(415) 776-1380", "Located in the Tenderloin neighborhood, a 10-minute walk from a BART rail station, this retro motor lodge has hosted many rock musicians and other celebrities since the 1950s. It\u2019s a 4-minute walk from the historic Great American Music Hall nightclub.", "601", "Eddy St", "94109", 37.7831, -122.4181},
	{"St. Regis San Francisco", "(415) 284-4000", stRegisDescription, "125", "3rd St", "94109", 37.7863, -122.4015},
}

// Profiles are the 80 hotels' profiles, hotel 1 first.
func Profiles() []Profile {
	out := make([]Profile, 0, Hotels)
	for n := 1; n <= Hotels; n++ {
		id := HotelID(n)
		var h namedHotel
		var lat, lon float32
		if n <= len(namedHotels) {
			h = namedHotels[n-1]
			lat, lon = float32(h.lat), float32(h.lon)
		} else {
			h = namedHotels[5]
			h.phone = "(415) 284-40" + id
			// The original computes these in float32.
			lat = 37.7835 + float32(n)/500.0*3
			lon = -122.41 + float32(n)/500.0*4
		}
		out = append(out, Profile{
			ID: id, Name: h.name, PhoneNumber: h.phone, Description: h.description,
			Address: Address{StreetNumber: h.streetNumber, StreetName: h.streetName, City: "San Francisco",
				State: "CA", Country: "United States", PostalCode: h.postalCode, Lat: lat, Lon: lon},
		})
	}
	return out
}

// hotel3GeoLat is hotel 3's latitude in the original's geo seed; its
// profile and its recommendation entry have 37.7834.
const hotel3GeoLat = 37.7854

// Points are the 80 hotels' positions in the geo index. Hotel 3 is at
// latitude 37.7854 there, 222 m north of where its profile puts it, as in
// the original.
func Points() []Point {
	out := make([]Point, 0, Hotels)
	for n := 1; n <= Hotels; n++ {
		p := Point{HotelID: HotelID(n), Lat: generatedLat(n), Lon: generatedLon(n)}
		if n <= len(namedHotels) {
			p.Lat, p.Lon = namedHotels[n-1].lat, namedHotels[n-1].lon
		}
		if n == 3 {
			p.Lat = hotel3GeoLat
		}
		out = append(out, p)
	}
	return out
}

// priceBand is the rate and the price (inclusive rate) of hotels 7..80
// whose number is a multiple of 3, by the number modulo 5.
func priceBand(n int) (rate, inclusive float64) {
	switch n % 5 {
	case 1:
		return 120, 140
	case 2:
		return 124, 144
	case 3:
		return 132, 158
	case 4:
		return 232, 258
	}
	return 109, 123.17
}

// Recommendables are the 80 hotels as the recommendation service ranks
// them, at their profiles' positions (hotel 3 at latitude 37.7834, not
// the geo index's 37.7854, as in the original).
func Recommendables() []Recommendable {
	named := [6][2]float64{{109, 150}, {139, 120}, {109, 190}, {129, 160}, {119, 140}, {149, 200}}
	out := make([]Recommendable, 0, Hotels)
	for n := 1; n <= Hotels; n++ {
		r := Recommendable{HotelID: HotelID(n), Lat: generatedLat(n), Lon: generatedLon(n), Rate: 135, Price: 179}
		if n <= len(namedHotels) {
			r.Lat, r.Lon = namedHotels[n-1].lat, namedHotels[n-1].lon
			r.Rate, r.Price = named[n-1][0], named[n-1][1]
		} else if n%3 == 0 {
			r.Rate, r.Price = priceBand(n)
		}
		out = append(out, r)
	}
	return out
}

// RatePlans are the seeded rate plans: hotels 1, 2 and 3, and every hotel
// from 7 to 80 whose number is a multiple of 3 (27 plans, one per hotel).
// A hotel without a plan is never a search result, as in the original.
func RatePlans() []RatePlan {
	king := func(rate, inclusive float64) RoomType {
		return RoomType{BookableRate: rate, Code: "KNG", RoomDescription: "King sized bed", TotalRate: rate, TotalRateInclusive: inclusive}
	}
	out := []RatePlan{
		{HotelID: "1", Code: "RACK", InDate: "2015-04-09", OutDate: "2015-04-10", RoomType: king(109, 123.17)},
		{HotelID: "2", Code: "RACK", InDate: "2015-04-09", OutDate: "2015-04-10", RoomType: RoomType{BookableRate: 139, Code: "QN", RoomDescription: "Queen sized bed", TotalRate: 139, TotalRateInclusive: 153.09}},
		{HotelID: "3", Code: "RACK", InDate: "2015-04-09", OutDate: "2015-04-10", RoomType: king(109, 123.17)},
	}
	for n := 7; n <= Hotels; n++ {
		if n%3 != 0 {
			continue
		}
		checkout := "2015-04-24"
		if n%2 == 0 {
			checkout = "2015-04-17"
		}
		out = append(out, RatePlan{HotelID: HotelID(n), Code: "RACK", InDate: "2015-04-09", OutDate: checkout, RoomType: king(priceBand(n))})
	}
	return out
}

// Capacities are the 80 hotels' rooms per night: 200 for hotels 1..6, and
// from 7 on 300, 250 or 200 by the number modulo 3 (1, 2, 0).
func Capacities() []Capacity {
	out := make([]Capacity, 0, Hotels)
	for n := 1; n <= Hotels; n++ {
		rooms := 200
		if n > 6 {
			switch n % 3 {
			case 1:
				rooms = 300
			case 2:
				rooms = 250
			}
		}
		out = append(out, Capacity{HotelID: HotelID(n), Rooms: rooms})
	}
	return out
}

// Reservations are the seeded bookings: Alice's room at hotel 4 for the
// night of 2015-04-09.
func Reservations() []Reservation {
	return []Reservation{{HotelID: "4", CustomerName: "Alice", InDate: "2015-04-09", OutDate: "2015-04-10", Rooms: 1}}
}

// Username is user n's login name.
func Username(n int) string { return UserPrefix + strconv.Itoa(n) }

// Password is user n's password: n in decimal, ten times.
func Password(n int) string { return strings.Repeat(strconv.Itoa(n), 10) }

// HashPassword is the hex SHA-256 the user service stores and compares.
func HashPassword(password string) string {
	sum := sha256.Sum256([]byte(password))
	return hex.EncodeToString(sum[:])
}

// SeedUsers are the 501 users with their hashed passwords.
func SeedUsers() []User {
	out := make([]User, 0, Users)
	for n := 0; n < Users; n++ {
		out = append(out, User{Username: Username(n), Password: HashPassword(Password(n))})
	}
	return out
}
