package socialnetwork

import (
	"context"

	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
)

// MediaService implements sn.MediaService as DeathStarBench's does: it
// pairs each medium's ID with its type and stores nothing. The original
// deploys a MongoDB and a memcached beside the media service that its
// ComposeMedia never touches; a port that recorded every medium there made
// each compose-post pay 1..5 datastore inserts the original does not.
type MediaService struct{}

// ComposeMedia implements sn.MediaService.
func (MediaService) ComposeMedia(_ context.Context, _ int64, mediaTypes []string, mediaIDs []int64) ([]*sn.Media, error) {
	if len(mediaTypes) != len(mediaIDs) {
		return nil, badRequest("The lengths of media_id list and media_type list are not equal")
	}
	media := make([]*sn.Media, len(mediaIDs))
	for i, id := range mediaIDs {
		media[i] = &sn.Media{MediaID: id, MediaType: mediaTypes[i]}
	}
	return media, nil
}
