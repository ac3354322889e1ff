package hotelreservation

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/orchbench/orchbench/deathstarbench/hotelreservation/dataset"
	hotelpb "github.com/orchbench/orchbench/deathstarbench/hotelreservation/proto"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

// profileService answers hotel profiles: memcached first (key
// profile:<hotel>, the profile as JSON), the collection for the misses.
type profileService struct {
	hotelpb.UnimplementedProfileServer
	hotels store.Collection
	cache  store.Cache
	logger *slog.Logger
}

func profileKey(hotelID string) string { return "profile:" + hotelID }

// GetProfiles answers the profiles of the requested hotels in request
// order. An unknown hotel is left out (the original answered an empty
// profile for it).
func (s *profileService) GetProfiles(ctx context.Context, req *hotelpb.ProfileRequest) (*hotelpb.ProfileResult, error) {
	ids := dedupe(req.GetHotelIds())
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = profileKey(id)
	}
	cached, err := s.cache.GetMulti(ctx, keys)
	if err != nil {
		s.logger.Warn("memcached read failed; reading the profiles from the store", "error", err)
		cached = nil
	}
	res := &hotelpb.ProfileResult{Hotels: make([]*hotelpb.Hotel, 0, len(ids))}
	for _, id := range ids {
		var p dataset.Profile
		if value, ok := cached[profileKey(id)]; !ok || json.Unmarshal(value, &p) != nil {
			var doc profileDoc
			err := s.hotels.Get(ctx, id, &doc)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			p = doc.Profile
			if value, err := json.Marshal(p); err == nil {
				if err := s.cache.Set(ctx, profileKey(id), value, 0); err != nil {
					s.logger.Debug("memcached write failed", "key", profileKey(id), "error", err)
				}
			}
		}
		res.Hotels = append(res.Hotels, &hotelpb.Hotel{
			Id: p.ID, Name: p.Name, PhoneNumber: p.PhoneNumber, Description: p.Description,
			Address: &hotelpb.Address{
				StreetNumber: p.Address.StreetNumber, StreetName: p.Address.StreetName, City: p.Address.City,
				State: p.Address.State, Country: p.Address.Country, PostalCode: p.Address.PostalCode,
				Lat: p.Address.Lat, Lon: p.Address.Lon,
			},
		})
	}
	return res, nil
}
