package hotelreservation

import (
	"context"

	hotelpb "github.com/orchbench/orchbench/deathstarbench/hotelreservation/proto"
)

// searchService asks geo for the hotels near a point and rate for their
// plans, and answers the hotels that have a plan, in the plans' order
// (highest total rate first), as the original does.
type searchService struct {
	hotelpb.UnimplementedSearchServer
	geo, rate *upstream
}

// Nearby implements the search.
func (s *searchService) Nearby(ctx context.Context, req *hotelpb.SearchRequest) (*hotelpb.SearchResult, error) {
	nearby, err := hotelpb.NewGeoClient(s.geo.conn()).Nearby(ctx, &hotelpb.GeoRequest{Lat: req.GetLat(), Lon: req.GetLon()})
	if err != nil {
		return nil, err
	}
	rates, err := hotelpb.NewRateClient(s.rate.conn()).GetRates(ctx, &hotelpb.RateRequest{
		HotelIds: nearby.GetHotelIds(), InDate: req.GetInDate(), OutDate: req.GetOutDate(),
	})
	if err != nil {
		return nil, err
	}
	res := &hotelpb.SearchResult{}
	for _, plan := range rates.GetRatePlans() {
		res.HotelIds = append(res.HotelIds, plan.GetHotelId())
	}
	return res, nil
}
