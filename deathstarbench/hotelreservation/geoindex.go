package hotelreservation

import (
	"math"
	"sort"
)

// The geo service's nearest-hotels rule, as DeathStarBench's geo service
// gets it from its geo index library: points sit in square cells of half a
// kilometre (a degree of latitude counted as 111 km, of longitude as 85
// km); a query takes the points of its own cell, then of rings of cells
// around it, one ring further each time, until the rings have brought more
// than k points or reach twice the radius; it ranks them by a flat-earth
// distance, keeps the first k, and cuts the list at the first one farther
// than the radius by the great-circle distance. Rings stop early, so a
// point of the next ring closer than a corner of this one can be missed:
// the rule, not the exact k nearest, is what the original answers.
const (
	cellMeters       = 500.0
	latDegreeMeters  = 111000.0
	lonDegreeMeters  = 85000.0
	earthRadiusM     = 6371000.0
	nearbyRadiusM    = 10000.0 // the geo service's 10 km
	nearbyMaxResults = 5
)

type geoPoint struct {
	id       string
	lat, lon float64
}

type cell struct{ x, y int }

func cellOf(lat, lon float64) cell {
	return cell{
		x: int((90 + lat) * latDegreeMeters / cellMeters),
		y: int((180 + lon) * lonDegreeMeters / cellMeters),
	}
}

// geoIndex is immutable once built, so queries need no lock.
type geoIndex struct {
	cells map[cell][]geoPoint
}

func newGeoIndex(points []geoPoint) *geoIndex {
	idx := &geoIndex{cells: map[cell][]geoPoint{}}
	for _, p := range points {
		c := cellOf(p.lat, p.lon)
		idx.cells[c] = append(idx.cells[c], p)
	}
	return idx
}

// span appends the points of the cells x in [x0,x1], y in [y0,y1].
func (g *geoIndex) span(out []geoPoint, x0, x1, y0, y1 int) []geoPoint {
	for x := x0; x <= x1; x++ {
		for y := y0; y <= y1; y++ {
			out = append(out, g.cells[cell{x, y}]...)
		}
	}
	return out
}

// nearest answers up to k points near (lat, lon) within radius metres, by
// the rule above.
func (g *geoIndex) nearest(lat, lon float64, k int, radius float64) []geoPoint {
	at := cellOf(lat, lon)
	found := g.span(nil, at.x, at.x, at.y, at.y)
	ringLimit := math.Max(radius*2, cellMeters*2+0.01)
	inRings := 0
	for d := 1; float64(d)*cellMeters <= ringLimit; d++ {
		before := len(found)
		found = g.span(found, at.x-d, at.x+d, at.y+d, at.y+d)
		found = g.span(found, at.x-d, at.x+d, at.y-d, at.y-d)
		found = g.span(found, at.x-d, at.x-d, at.y-d+1, at.y+d-1)
		found = g.span(found, at.x+d, at.x+d, at.y-d+1, at.y+d-1)
		inRings += len(found) - before
		if inRings > k {
			break
		}
	}
	sort.SliceStable(found, func(i, j int) bool {
		return flatSquareDistance(found[i].lat, found[i].lon, lat, lon) < flatSquareDistance(found[j].lat, found[j].lon, lat, lon)
	})
	found = found[:min(k, len(found))]
	for i, p := range found {
		if greatCircleMeters(lat, lon, p.lat, p.lon) > radius {
			return found[:i]
		}
	}
	return found
}

// greatCircleMeters is the haversine distance on a sphere of the earth's
// mean radius.
func greatCircleMeters(lat1, lon1, lat2, lon2 float64) float64 {
	rad := math.Pi / 180
	dLat := (lat2 - lat1) * rad
	dLon := (lon2 - lon1) * rad
	a := math.Pow(math.Sin(dLat/2), 2) + math.Pow(math.Sin(dLon/2), 2)*math.Cos(lat1*rad)*math.Cos(lat2*rad)
	return earthRadiusM * 2 * math.Atan2(math.Sqrt(a), math.Sqrt(1-a))
}

// lonDegreeAt is the great-circle length of a degree of longitude at lat
// truncated to a tenth of a degree, the flat distance's scale.
func lonDegreeAt(lat float64) float64 {
	rounded := float64(int(lat*10)) / 10
	return greatCircleMeters(rounded, 0, rounded, 1)
}

// flatSquareDistance is the squared flat-earth distance the ranking uses.
func flatSquareDistance(lat1, lon1, lat2, lon2 float64) float64 {
	latLen := math.Abs(lat1-lat2) * latDegreeMeters
	lonLen := math.Abs(lon1-lon2) * lonDegreeAt((lat1+lat2)/2)
	return latLen*latLen + lonLen*lonLen
}
