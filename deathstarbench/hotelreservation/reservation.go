package hotelreservation

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/hotelreservation/dataset"
	hotelpb "github.com/orchbench/orchbench/deathstarbench/hotelreservation/proto"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

// reservationService books rooms and checks availability. Each night of a
// stay must have room: the rooms booked that night plus those asked for
// may not exceed the hotel's capacity. Capacities and each night's booked
// rooms are read through memcached (keys reservation:cap:<hotel> and
// reservation:night:<hotel>:<date>), as in the original; a booking
// updates the store, then the cache. Bookings of one hotel are serialised
// in this process, so two concurrent ones cannot both take the last room;
// replicas of the service do not share that lock (nor did the original's
// check-then-insert).
type reservationService struct {
	hotelpb.UnimplementedReservationServer
	reservations, nights, capacities store.Collection
	cache                            store.Cache
	logger                           *slog.Logger

	locks sync.Map // hotel ID -> *sync.Mutex
}

func capacityKey(hotelID string) string { return "reservation:cap:" + hotelID }
func nightKey(hotelID, date string) string {
	return "reservation:night:" + hotelID + ":" + date
}

func (s *reservationService) seed(ctx context.Context) error {
	var caps []any
	for _, c := range dataset.Capacities() {
		caps = append(caps, capacityDoc{ID: c.HotelID, Capacity: c})
	}
	if err := insertMissing(ctx, s.capacities, caps); err != nil {
		return err
	}
	for _, r := range dataset.Reservations() {
		nights, ok := stayNights(r.InDate, r.OutDate)
		if !ok {
			continue
		}
		// The nights first: a booking whose record exists must be counted.
		var counts []any
		for _, night := range nights {
			counts = append(counts, nightDoc{ID: nightID(r.HotelID, night), Rooms: r.Rooms})
		}
		if err := insertMissing(ctx, s.nights, counts); err != nil {
			return err
		}
		if err := insertMissing(ctx, s.reservations, []any{reservationDoc{ID: seededReservationID(r), Reservation: r}}); err != nil {
			return err
		}
	}
	return nil
}

// stayNights lists the dates of the nights from in up to out (YYYY-MM-DD);
// false when either does not parse. out on or before in is no night.
func stayNights(in, out string) ([]string, bool) {
	from, err := time.Parse(time.DateOnly, in)
	if err != nil {
		return nil, false
	}
	to, err := time.Parse(time.DateOnly, out)
	if err != nil {
		return nil, false
	}
	var nights []string
	// A year of nights at most: a stay is checked night by night.
	for d := from; d.Before(to) && len(nights) < 366; d = d.AddDate(0, 0, 1) {
		nights = append(nights, d.Format(time.DateOnly))
	}
	return nights, true
}

func (s *reservationService) lock(hotelID string) func() {
	m, _ := s.locks.LoadOrStore(hotelID, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// capacity is a hotel's rooms per night; false for a hotel with none on
// record.
func (s *reservationService) capacity(ctx context.Context, hotelID string) (int, bool, error) {
	cached, err := s.cache.GetMulti(ctx, []string{capacityKey(hotelID)})
	if err == nil {
		if v, ok := cached[capacityKey(hotelID)]; ok {
			if n, err := strconv.Atoi(string(v)); err == nil {
				return n, true, nil
			}
		}
	}
	var doc capacityDoc
	switch err := s.capacities.Get(ctx, hotelID, &doc); {
	case errors.Is(err, store.ErrNotFound):
		return 0, false, nil
	case err != nil:
		return 0, false, err
	}
	s.cacheSet(ctx, capacityKey(hotelID), doc.Rooms)
	return doc.Rooms, true, nil
}

// booked is the rooms booked at a hotel on each of nights.
func (s *reservationService) booked(ctx context.Context, hotelID string, nights []string) ([]int, error) {
	keys := make([]string, len(nights))
	for i, night := range nights {
		keys[i] = nightKey(hotelID, night)
	}
	cached, err := s.cache.GetMulti(ctx, keys)
	if err != nil {
		s.logger.Warn("memcached read failed; reading the nights from the store", "error", err)
		cached = nil
	}
	rooms := make([]int, len(nights))
	for i, night := range nights {
		if v, ok := cached[keys[i]]; ok {
			if n, err := strconv.Atoi(string(v)); err == nil {
				rooms[i] = n
				continue
			}
		}
		var doc nightDoc
		switch err := s.nights.Get(ctx, nightID(hotelID, night), &doc); {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return nil, err
		}
		rooms[i] = doc.Rooms
		s.cacheSet(ctx, keys[i], doc.Rooms)
	}
	return rooms, nil
}

func (s *reservationService) cacheSet(ctx context.Context, key string, n int) {
	if err := s.cache.Set(ctx, key, []byte(strconv.Itoa(n)), 0); err != nil {
		s.logger.Debug("memcached write failed", "key", key, "error", err)
	}
}

// fits reports whether rooms more fit at the hotel on every night.
func (s *reservationService) fits(ctx context.Context, hotelID string, nights []string, rooms int) (bool, []int, error) {
	capacity, known, err := s.capacity(ctx, hotelID)
	if err != nil || !known {
		return false, nil, err
	}
	booked, err := s.booked(ctx, hotelID, nights)
	if err != nil {
		return false, nil, err
	}
	for _, n := range booked {
		if n+rooms > capacity {
			return false, booked, nil
		}
	}
	return true, booked, nil
}

// MakeReservation books the rooms at the first requested hotel for every
// night of the stay, and answers that hotel, or no hotel when a night is
// full or the hotel unknown.
func (s *reservationService) MakeReservation(ctx context.Context, req *hotelpb.ReservationRequest) (*hotelpb.ReservationResult, error) {
	res := &hotelpb.ReservationResult{HotelIds: []string{}}
	if len(req.GetHotelIds()) == 0 {
		return res, nil
	}
	hotelID, rooms := req.GetHotelIds()[0], int(req.GetRoomNumber())
	nights, _ := stayNights(req.GetInDate(), req.GetOutDate())
	defer s.lock(hotelID)()
	ok, booked, err := s.fits(ctx, hotelID, nights, rooms)
	if err != nil || !ok {
		return res, err
	}
	if len(nights) > 0 {
		// The nights first: a crash between the two leaves rooms counted
		// that no record holds (a room lost), never a record whose rooms
		// are not counted (a room sold twice).
		for i, night := range nights {
			if err := s.nights.Put(ctx, nightDoc{ID: nightID(hotelID, night), Rooms: booked[i] + rooms}); err != nil {
				return res, err
			}
			s.cacheSet(ctx, nightKey(hotelID, night), booked[i]+rooms)
		}
		id := make([]byte, 8)
		rand.Read(id)
		record := reservationDoc{ID: hotelID + ":" + req.GetInDate() + ":" + hex.EncodeToString(id), Reservation: dataset.Reservation{
			HotelID: hotelID, CustomerName: req.GetCustomerName(), InDate: req.GetInDate(), OutDate: req.GetOutDate(), Rooms: rooms,
		}}
		if err := s.reservations.Insert(ctx, record); err != nil {
			return res, err
		}
	}
	res.HotelIds = append(res.HotelIds, hotelID)
	return res, nil
}

// CheckAvailability answers, in request order, the hotels with the rooms
// free every night of the stay.
func (s *reservationService) CheckAvailability(ctx context.Context, req *hotelpb.ReservationRequest) (*hotelpb.ReservationResult, error) {
	res := &hotelpb.ReservationResult{HotelIds: []string{}}
	nights, _ := stayNights(req.GetInDate(), req.GetOutDate())
	for _, hotelID := range dedupe(req.GetHotelIds()) {
		ok, _, err := s.fits(ctx, hotelID, nights, int(req.GetRoomNumber()))
		if err != nil {
			return nil, err
		}
		if ok {
			res.HotelIds = append(res.HotelIds, hotelID)
		}
	}
	return res, nil
}
