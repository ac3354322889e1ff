package hotelreservation

import (
	"context"
	"fmt"

	"github.com/orchbench/orchbench/deathstarbench/hotelreservation/dataset"
	hotelpb "github.com/orchbench/orchbench/deathstarbench/hotelreservation/proto"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

// userService checks logins against the users read from its collection
// once at start, as the original's.
type userService struct {
	hotelpb.UnimplementedUserServer
	passwords map[string]string // username -> hex SHA-256
}

func (s *userService) load(ctx context.Context, coll store.Collection) error {
	var docs []any
	for _, u := range dataset.SeedUsers() {
		docs = append(docs, userDoc{ID: u.Username, User: u})
	}
	if err := insertMissing(ctx, coll, docs); err != nil {
		return err
	}
	var stored []userDoc
	if err := coll.All(ctx, &stored); err != nil {
		return err
	}
	if len(stored) == 0 {
		return fmt.Errorf("the user collection is empty after seeding")
	}
	s.passwords = make(map[string]string, len(stored))
	for _, d := range stored {
		s.passwords[d.Username] = d.Password
	}
	return nil
}

// CheckUser answers whether the password's SHA-256 is the user's.
func (s *userService) CheckUser(_ context.Context, req *hotelpb.UserRequest) (*hotelpb.UserResult, error) {
	want, ok := s.passwords[req.GetUsername()]
	return &hotelpb.UserResult{Correct: ok && want == dataset.HashPassword(req.GetPassword())}, nil
}
