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

// hotelNights is what a check needs of one hotel: its capacity (known
// false when the hotel has none on record) and the rooms booked on each
// night of the stay.
type hotelNights struct {
	capacity int
	known    bool
	booked   []int
}

// fits reports whether rooms more fit on every night.
func (h hotelNights) fits(rooms int) bool {
	if !h.known {
		return false
	}
	for _, n := range h.booked {
		if n+rooms > h.capacity {
			return false
		}
	}
	return true
}

// lookup reads the capacity and the nights of every hotel: one memcached
// read for all of them, as the original's two multi-gets, and the store for
// what the cache lacks (written back to the cache).
func (s *reservationService) lookup(ctx context.Context, hotelIDs, nights []string) ([]hotelNights, error) {
	keys := make([]string, 0, len(hotelIDs)*(1+len(nights)))
	for _, id := range hotelIDs {
		keys = append(keys, capacityKey(id))
		for _, night := range nights {
			keys = append(keys, nightKey(id, night))
		}
	}
	cached, err := s.cache.GetMulti(ctx, keys)
	if err != nil {
		s.logger.Warn("memcached read failed; reading capacities and nights from the store", "error", err)
		cached = nil
	}
	fromCache := func(key string) (int, bool) {
		v, ok := cached[key]
		if !ok {
			return 0, false
		}
		n, err := strconv.Atoi(string(v))
		return n, err == nil
	}
	out := make([]hotelNights, len(hotelIDs))
	for i, id := range hotelIDs {
		h := &out[i]
		if h.capacity, h.known = fromCache(capacityKey(id)); !h.known {
			var doc capacityDoc
			switch err := s.capacities.Get(ctx, id, &doc); {
			case errors.Is(err, store.ErrNotFound):
				continue // no capacity on record: nothing fits
			case err != nil:
				return nil, err
			}
			h.capacity, h.known = doc.Rooms, true
			s.cacheSet(ctx, capacityKey(id), doc.Rooms)
		}
		h.booked = make([]int, len(nights))
		for j, night := range nights {
			n, ok := fromCache(nightKey(id, night))
			if !ok {
				var doc nightDoc
				switch err := s.nights.Get(ctx, nightID(id, night), &doc); {
				case errors.Is(err, store.ErrNotFound):
				case err != nil:
					return nil, err
				}
				n = doc.Rooms
				s.cacheSet(ctx, nightKey(id, night), n)
			}
			h.booked[j] = n
		}
	}
	return out, nil
}

func (s *reservationService) cacheSet(ctx context.Context, key string, n int) {
	if err := s.cache.Set(ctx, key, []byte(strconv.Itoa(n)), 0); err != nil {
		s.logger.Debug("memcached write failed", "key", key, "error", err)
	}
}

// MakeReservation books the rooms at the first requested hotel for every
// night of the stay, and answers that hotel, or no hotel when a night is
// full or the hotel unknown. A negative number of rooms books nothing:
// the original took it, and the night's count went down, freeing rooms
// that others had booked.
func (s *reservationService) MakeReservation(ctx context.Context, req *hotelpb.ReservationRequest) (*hotelpb.ReservationResult, error) {
	res := &hotelpb.ReservationResult{HotelIds: []string{}}
	if len(req.GetHotelIds()) == 0 || req.GetRoomNumber() < 0 {
		return res, nil
	}
	hotelID, rooms := req.GetHotelIds()[0], int(req.GetRoomNumber())
	nights, _ := stayNights(req.GetInDate(), req.GetOutDate())
	defer s.lock(hotelID)()
	found, err := s.lookup(ctx, []string{hotelID}, nights)
	if err != nil || !found[0].fits(rooms) {
		return res, err
	}
	booked := found[0].booked
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
// free every night of the stay (none for a negative number of rooms).
func (s *reservationService) CheckAvailability(ctx context.Context, req *hotelpb.ReservationRequest) (*hotelpb.ReservationResult, error) {
	res := &hotelpb.ReservationResult{HotelIds: []string{}}
	if req.GetRoomNumber() < 0 {
		return res, nil
	}
	nights, _ := stayNights(req.GetInDate(), req.GetOutDate())
	hotelIDs := dedupe(req.GetHotelIds())
	found, err := s.lookup(ctx, hotelIDs, nights)
	if err != nil {
		return nil, err
	}
	for i, hotelID := range hotelIDs {
		if found[i].fits(int(req.GetRoomNumber())) {
			res.HotelIds = append(res.HotelIds, hotelID)
		}
	}
	return res, nil
}
