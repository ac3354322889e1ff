package socialnetwork

import (
	"context"

	"github.com/orchbench/orchbench/deathstarbench/internal/uniqueid"
	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
)

// UniqueIDService implements sn.UniqueIdService.
type UniqueIDService struct{ IDs *uniqueid.Generator }

// ComposeUniqueId implements sn.UniqueIdService.
func (s *UniqueIDService) ComposeUniqueId(_ context.Context, _ int64, _ sn.PostType) (int64, error) {
	return s.IDs.Next(), nil
}
