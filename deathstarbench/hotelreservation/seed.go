package hotelreservation

import (
	"context"
	"fmt"

	"github.com/orchbench/orchbench/deathstarbench/hotelreservation/dataset"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

// The documents as stored: the original's fields, with an _id by which
// FerretDB's SQLite backend finds a document without scanning the
// collection (deathstarbench/store).

type geoDoc struct {
	ID            string `bson:"_id"`
	dataset.Point `bson:",inline"`
}

type profileDoc struct {
	ID              string `bson:"_id"`
	dataset.Profile `bson:",inline"`
}

// rateDoc holds every plan of one hotel, so a lookup is one read by _id.
type rateDoc struct {
	ID    string             `bson:"_id"`
	Plans []dataset.RatePlan `bson:"plans"`
}

type recommendationDoc struct {
	ID                    string `bson:"_id"`
	dataset.Recommendable `bson:",inline"`
}

type userDoc struct {
	ID           string `bson:"_id"`
	dataset.User `bson:",inline"`
}

type capacityDoc struct {
	ID               string `bson:"_id"`
	dataset.Capacity `bson:",inline"`
}

type reservationDoc struct {
	ID                  string `bson:"_id"`
	dataset.Reservation `bson:",inline"`
}

// nightDoc is the rooms booked at a hotel for one night, the sum of its
// reservations' rooms, kept so a check reads one document per night.
type nightDoc struct {
	ID    string `bson:"_id"`
	Rooms int    `bson:"rooms"`
}

func nightID(hotelID, date string) string { return hotelID + ":" + date }

// seededReservationID names a seeded reservation, so seeding twice
// inserts it once.
func seededReservationID(r dataset.Reservation) string {
	return fmt.Sprintf("seed:%s:%s:%s", r.HotelID, r.InDate, r.CustomerName)
}

// insertMissing inserts the documents whose _id is not there yet.
func insertMissing(ctx context.Context, coll store.Collection, docs []any) error {
	_, err := coll.InsertMany(ctx, docs)
	return err
}

func seedRatePlans(ctx context.Context, coll store.Collection) error {
	byHotel := map[string][]dataset.RatePlan{}
	var order []string
	for _, p := range dataset.RatePlans() {
		if byHotel[p.HotelID] == nil {
			order = append(order, p.HotelID)
		}
		byHotel[p.HotelID] = append(byHotel[p.HotelID], p)
	}
	docs := make([]any, 0, len(order))
	for _, id := range order {
		docs = append(docs, rateDoc{ID: id, Plans: byHotel[id]})
	}
	return insertMissing(ctx, coll, docs)
}

func seedProfiles(ctx context.Context, coll store.Collection) error {
	var docs []any
	for _, p := range dataset.Profiles() {
		docs = append(docs, profileDoc{ID: p.ID, Profile: p})
	}
	return insertMissing(ctx, coll, docs)
}
