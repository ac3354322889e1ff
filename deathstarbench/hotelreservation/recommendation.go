package hotelreservation

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/orchbench/orchbench/deathstarbench/hotelreservation/dataset"
	hotelpb "github.com/orchbench/orchbench/deathstarbench/hotelreservation/proto"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

// recommendationService ranks every hotel, read from its collection once
// at start, as the original's.
type recommendationService struct {
	hotelpb.UnimplementedRecommendationServer
	hotels []dataset.Recommendable
}

func (s *recommendationService) load(ctx context.Context, coll store.Collection) error {
	var docs []any
	for _, r := range dataset.Recommendables() {
		docs = append(docs, recommendationDoc{ID: r.HotelID, Recommendable: r})
	}
	if err := insertMissing(ctx, coll, docs); err != nil {
		return err
	}
	var stored []recommendationDoc
	if err := coll.All(ctx, &stored); err != nil {
		return err
	}
	if len(stored) == 0 {
		return fmt.Errorf("the recommendation collection is empty after seeding")
	}
	hotels := make([]dataset.Recommendable, 0, len(stored))
	for _, d := range stored {
		hotels = append(hotels, d.Recommendable)
	}
	// Answers list ties in hotel number order (the original's came in map
	// order, different every time).
	sort.Slice(hotels, func(i, j int) bool { return hotelOrder(hotels[i].HotelID, hotels[j].HotelID) })
	s.hotels = hotels
	return nil
}

func hotelOrder(a, b string) bool {
	na, errA := strconv.Atoi(a)
	nb, errB := strconv.Atoi(b)
	if errA == nil && errB == nil {
		return na < nb
	}
	return a < b
}

// GetRecommendations answers every hotel tied for best: nearest to the
// point by great-circle distance ("dis"), highest rate ("rate") or lowest
// price ("price"); any other requirement gets none.
func (s *recommendationService) GetRecommendations(_ context.Context, req *hotelpb.RecommendationRequest) (*hotelpb.RecommendationResult, error) {
	var score func(dataset.Recommendable) float64 // lower is better
	switch req.GetRequire() {
	case "dis":
		score = func(h dataset.Recommendable) float64 {
			return greatCircleMeters(req.GetLat(), req.GetLon(), h.Lat, h.Lon) / 1000
		}
	case "rate":
		score = func(h dataset.Recommendable) float64 { return -h.Rate }
	case "price":
		score = func(h dataset.Recommendable) float64 { return h.Price }
	default:
		return &hotelpb.RecommendationResult{}, nil
	}
	best := math.Inf(1)
	for _, h := range s.hotels {
		best = math.Min(best, score(h))
	}
	res := &hotelpb.RecommendationResult{}
	for _, h := range s.hotels {
		if score(h) == best {
			res.HotelIds = append(res.HotelIds, h.HotelID)
		}
	}
	return res, nil
}
