package socialnetwork

import (
	"context"
	"errors"
	"strconv"
	"sync"

	"github.com/orchbench/orchbench/deathstarbench/internal/rpc"
	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

// postDoc is a post as stored in mongo, keyed by the decimal post ID.
type postDoc struct {
	ID           string          `bson:"_id"`
	PostID       int64           `bson:"post_id"`
	Creator      creatorDoc      `bson:"creator"`
	ReqID        int64           `bson:"req_id"`
	Text         string          `bson:"text"`
	UserMentions []creatorDoc    `bson:"user_mentions"`
	Media        []mediaEntryDoc `bson:"media"`
	URLs         []urlEntryDoc   `bson:"urls"`
	Timestamp    int64           `bson:"timestamp"`
	PostType     int32           `bson:"post_type"`
}

type creatorDoc struct {
	UserID   int64  `bson:"user_id"`
	Username string `bson:"username"`
}

type mediaEntryDoc struct {
	MediaID   int64  `bson:"media_id"`
	MediaType string `bson:"media_type"`
}

type urlEntryDoc struct {
	ShortenedURL string `bson:"shortened_url"`
	ExpandedURL  string `bson:"expanded_url"`
}

func toPostDoc(p *sn.Post) postDoc {
	doc := postDoc{
		ID:        strconv.FormatInt(p.PostID, 10),
		PostID:    p.PostID,
		ReqID:     p.ReqID,
		Text:      p.Text,
		Timestamp: p.Timestamp,
		PostType:  int32(p.PostType),
	}
	if p.Creator != nil {
		doc.Creator = creatorDoc{UserID: p.Creator.UserID, Username: p.Creator.Username}
	}
	for _, m := range p.UserMentions {
		doc.UserMentions = append(doc.UserMentions, creatorDoc{UserID: m.UserID, Username: m.Username})
	}
	for _, m := range p.Media {
		doc.Media = append(doc.Media, mediaEntryDoc{MediaID: m.MediaID, MediaType: m.MediaType})
	}
	for _, u := range p.Urls {
		doc.URLs = append(doc.URLs, urlEntryDoc{ShortenedURL: u.ShortenedURL, ExpandedURL: u.ExpandedURL})
	}
	return doc
}

func (d postDoc) toPost() *sn.Post {
	p := &sn.Post{
		PostID:       d.PostID,
		Creator:      &sn.Creator{UserID: d.Creator.UserID, Username: d.Creator.Username},
		ReqID:        d.ReqID,
		Text:         d.Text,
		UserMentions: []*sn.UserMention{},
		Media:        []*sn.Media{},
		Urls:         []*sn.URL{},
		Timestamp:    d.Timestamp,
		PostType:     sn.PostType(d.PostType),
	}
	for _, m := range d.UserMentions {
		p.UserMentions = append(p.UserMentions, &sn.UserMention{UserID: m.UserID, Username: m.Username})
	}
	for _, m := range d.Media {
		p.Media = append(p.Media, &sn.Media{MediaID: m.MediaID, MediaType: m.MediaType})
	}
	for _, u := range d.URLs {
		p.Urls = append(p.Urls, &sn.URL{ShortenedURL: u.ShortenedURL, ExpandedURL: u.ExpandedURL})
	}
	return p
}

func postCacheKey(postID int64) string { return "post:" + strconv.FormatInt(postID, 10) }

// PostStorageService implements sn.PostStorageService: posts in mongo with
// memcached in front.
type PostStorageService struct {
	Posts store.Collection
	Cache store.Cache
	// MaxParallelReads bounds concurrent mongo reads for one ReadPosts.
	MaxParallelReads int
}

// StorePost implements sn.PostStorageService. As in DeathStarBench, the
// post goes to MongoDB only: memcached gets it from the first read that
// misses, as every cached post does.
func (s *PostStorageService) StorePost(ctx context.Context, _ int64, post *sn.Post) error {
	if post == nil {
		return badRequest("no post")
	}
	if err := s.Posts.Insert(ctx, toPostDoc(post)); err != nil && !errors.Is(err, store.ErrDuplicate) {
		return internalError("store post", err)
	}
	return nil
}

// ReadPost implements sn.PostStorageService.
func (s *PostStorageService) ReadPost(ctx context.Context, reqID int64, postID int64) (*sn.Post, error) {
	posts, err := s.ReadPosts(ctx, reqID, []int64{postID})
	if err != nil {
		return nil, err
	}
	if len(posts) == 0 {
		return nil, notFound("post_id: %d doesn't exist", postID)
	}
	return posts[0], nil
}

// ReadPosts implements sn.PostStorageService.
func (s *PostStorageService) ReadPosts(ctx context.Context, _ int64, postIDs []int64) ([]*sn.Post, error) {
	keys := make([]string, len(postIDs))
	for i, id := range postIDs {
		keys[i] = postCacheKey(id)
	}
	cached, err := s.Cache.GetMulti(ctx, keys)
	if err != nil {
		cached = map[string][]byte{}
	}
	posts := make([]*sn.Post, len(postIDs))
	var missing []int
	for i := range postIDs {
		var post sn.Post
		// A value that does not decode (another build's encoding, say) is a miss.
		if value, ok := cached[keys[i]]; ok && rpc.Unmarshal(ctx, value, &post) == nil {
			posts[i] = &post
			continue
		}
		missing = append(missing, i)
	}

	// One lookup per missing post by _id: FerretDB answers those from its
	// primary key, while an $in query would scan the collection.
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		limit    = make(chan struct{}, max(s.MaxParallelReads, 1))
	)
	for _, i := range missing {
		wg.Add(1)
		limit <- struct{}{}
		go func() {
			defer func() { <-limit; wg.Done() }()
			var doc postDoc
			err := s.Posts.Get(ctx, strconv.FormatInt(postIDs[i], 10), &doc)
			if errors.Is(err, store.ErrNotFound) {
				return
			}
			if err != nil {
				mu.Lock()
				firstErr = firstError(firstErr, err)
				mu.Unlock()
				return
			}
			post := doc.toPost()
			posts[i] = post
			if value, err := rpc.Marshal(ctx, post); err == nil {
				_ = s.Cache.Set(ctx, keys[i], value, cacheTTL)
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, internalError("read post", firstErr)
	}

	found := posts[:0]
	for _, post := range posts {
		if post != nil {
			found = append(found, post)
		}
	}
	return found, nil
}
