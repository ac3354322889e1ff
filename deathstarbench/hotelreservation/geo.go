package hotelreservation

import (
	"context"
	"fmt"

	"github.com/orchbench/orchbench/deathstarbench/hotelreservation/dataset"
	hotelpb "github.com/orchbench/orchbench/deathstarbench/hotelreservation/proto"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

// geoService answers the hotels nearest a point from an index of every
// hotel's position, read from its collection once at start, as the
// original's.
type geoService struct {
	hotelpb.UnimplementedGeoServer
	index *geoIndex
}

func (s *geoService) load(ctx context.Context, coll store.Collection) error {
	var docs []any
	for _, p := range dataset.Points() {
		docs = append(docs, geoDoc{ID: p.HotelID, Point: p})
	}
	if err := insertMissing(ctx, coll, docs); err != nil {
		return err
	}
	var stored []geoDoc
	if err := coll.All(ctx, &stored); err != nil {
		return err
	}
	if len(stored) == 0 {
		return fmt.Errorf("the geo collection is empty after seeding")
	}
	points := make([]geoPoint, 0, len(stored))
	for _, d := range stored {
		points = append(points, geoPoint{id: d.HotelID, lat: d.Lat, lon: d.Lon})
	}
	s.index = newGeoIndex(points)
	return nil
}

// Nearby answers up to 5 hotels within 10 km, nearest first.
func (s *geoService) Nearby(_ context.Context, req *hotelpb.GeoRequest) (*hotelpb.GeoResult, error) {
	found := s.index.nearest(float64(req.GetLat()), float64(req.GetLon()), nearbyMaxResults, nearbyRadiusM)
	res := &hotelpb.GeoResult{HotelIds: make([]string, 0, len(found))}
	for _, p := range found {
		res.HotelIds = append(res.HotelIds, p.id)
	}
	return res, nil
}
