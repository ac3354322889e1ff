package hotelreservation

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sort"

	"github.com/orchbench/orchbench/deathstarbench/hotelreservation/dataset"
	hotelpb "github.com/orchbench/orchbench/deathstarbench/hotelreservation/proto"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

// rateService answers the rate plans of hotels: memcached first (key
// rate:<hotel>, the plans as JSON), the collection for the misses, which
// are then cached. A hotel without plans is cached as having none.
type rateService struct {
	hotelpb.UnimplementedRateServer
	plans  store.Collection
	cache  store.Cache
	logger *slog.Logger
}

func rateKey(hotelID string) string { return "rate:" + hotelID }

// GetRates answers the plans of the requested hotels, highest total rate
// first (ties in request order).
func (s *rateService) GetRates(ctx context.Context, req *hotelpb.RateRequest) (*hotelpb.RateResult, error) {
	ids := dedupe(req.GetHotelIds())
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = rateKey(id)
	}
	cached, err := s.cache.GetMulti(ctx, keys)
	if err != nil {
		// The cache is in front of the store, not instead of it.
		s.logger.Warn("memcached read failed; reading the rate plans from the store", "error", err)
		cached = nil
	}
	var plans []dataset.RatePlan
	for _, id := range ids {
		var mine []dataset.RatePlan
		if value, ok := cached[rateKey(id)]; ok && json.Unmarshal(value, &mine) == nil {
			plans = append(plans, mine...)
			continue
		}
		var doc rateDoc
		switch err := s.plans.Get(ctx, id, &doc); {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return nil, err
		default:
			mine = doc.Plans
		}
		if value, err := json.Marshal(mine); err == nil {
			if err := s.cache.Set(ctx, rateKey(id), value, 0); err != nil {
				s.logger.Debug("memcached write failed", "key", rateKey(id), "error", err)
			}
		}
		plans = append(plans, mine...)
	}
	sort.SliceStable(plans, func(i, j int) bool { return plans[i].RoomType.TotalRate > plans[j].RoomType.TotalRate })
	res := &hotelpb.RateResult{RatePlans: make([]*hotelpb.RatePlan, 0, len(plans))}
	for _, p := range plans {
		res.RatePlans = append(res.RatePlans, &hotelpb.RatePlan{
			HotelId: p.HotelID, Code: p.Code, InDate: p.InDate, OutDate: p.OutDate,
			RoomType: &hotelpb.RoomType{
				BookableRate: p.RoomType.BookableRate, TotalRate: p.RoomType.TotalRate,
				TotalRateInclusive: p.RoomType.TotalRateInclusive, Code: p.RoomType.Code,
				RoomDescription: p.RoomType.RoomDescription,
			},
		})
	}
	return res, nil
}

// dedupe drops repeated IDs, keeping the first of each.
func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
