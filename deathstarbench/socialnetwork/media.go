package socialnetwork

import (
	"context"
	"errors"
	"strconv"

	"github.com/orchbench/orchbench/deathstarbench/socialnetwork/store"
	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
)

type mediaDoc struct {
	MediaID   string `bson:"_id"`
	MediaType string `bson:"media_type"`
}

// MediaService implements sn.MediaService: it pairs IDs with types and
// records each medium in mongo (memcached caches what was recorded, so a
// medium attached twice costs one insert).
type MediaService struct {
	Media store.Collection
	Cache store.Cache
}

// ComposeMedia implements sn.MediaService.
func (s *MediaService) ComposeMedia(ctx context.Context, _ int64, mediaTypes []string, mediaIDs []int64) ([]*sn.Media, error) {
	if len(mediaTypes) != len(mediaIDs) {
		return nil, badRequest("The lengths of media_id list and media_type list are not equal")
	}
	keys := make([]string, len(mediaIDs))
	for i, id := range mediaIDs {
		keys[i] = "media:" + strconv.FormatInt(id, 10)
	}
	known, err := s.Cache.GetMulti(ctx, keys)
	if err != nil {
		known = map[string][]byte{}
	}
	media := make([]*sn.Media, len(mediaIDs))
	for i, id := range mediaIDs {
		media[i] = &sn.Media{MediaID: id, MediaType: mediaTypes[i]}
		if _, ok := known[keys[i]]; ok {
			continue
		}
		err := s.Media.Insert(ctx, mediaDoc{MediaID: strconv.FormatInt(id, 10), MediaType: mediaTypes[i]})
		if err != nil && !errors.Is(err, store.ErrDuplicate) {
			return nil, internalError("store media", err)
		}
		_ = s.Cache.Set(ctx, keys[i], []byte(mediaTypes[i]), cacheTTL)
	}
	return media, nil
}
