package socialnetwork

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

// echoPosts answers ReadPosts with one post per asked ID, in order.
type echoPosts struct{ sn.PostStorageService }

func (echoPosts) ReadPosts(_ context.Context, _ int64, ids []int64) ([]*sn.Post, error) {
	posts := make([]*sn.Post, len(ids))
	for i, id := range ids {
		posts[i] = &sn.Post{PostID: id}
	}
	return posts, nil
}

func postIDs(posts []*sn.Post) []int64 {
	ids := make([]int64, len(posts))
	for i, p := range posts {
		ids[i] = p.PostID
	}
	return ids
}

// TestUserTimelineFallsBackToMongo: posts are written to both stores; with
// Redis emptied (a flush or restart) reads still return every post in
// order, from MongoDB, and write what they read back to Redis.
func TestUserTimelineFallsBackToMongo(t *testing.T) {
	ctx := context.Background()
	redis := store.NewMemoryTimelines()
	mongo := store.NewMemoryCollection()
	s := &UserTimelineService{Timelines: redis, Posts: mongo, PostStorage: echoPosts{}}
	const user = 7
	// Post i at time 1000+i; written out of order, read newest first.
	for _, i := range []int64{3, 1, 4, 0, 2, 5} {
		if err := s.WriteUserTimeline(ctx, 0, 100+i, user, 1000+i); err != nil {
			t.Fatal(err)
		}
	}
	newestFirst := []int64{105, 104, 103, 102, 101, 100}
	read := func(start, stop int32) []int64 {
		t.Helper()
		posts, err := s.ReadUserTimeline(ctx, 0, user, start, stop)
		if err != nil {
			t.Fatal(err)
		}
		return postIDs(posts)
	}
	if got := read(0, 10); !slices.Equal(got, newestFirst) {
		t.Fatalf("read with Redis full: %v, want %v", got, newestFirst)
	}

	redis.Clear()
	if got := read(1, 4); !slices.Equal(got, newestFirst[1:4]) {
		t.Fatalf("read of [1,4) after a Redis flush: %v, want %v from MongoDB", got, newestFirst[1:4])
	}
	// The read wrote the first 4 (the page and what precedes it) back.
	if n := redis.Len(userTimelineKey(user)); n != 4 {
		t.Fatalf("Redis holds %d posts after the read, want the 4 newest refilled", n)
	}
	// Redis now has 4; a page reaching past them takes the rest from MongoDB
	// without repeating what Redis gave.
	if got := read(2, 6); !slices.Equal(got, newestFirst[2:6]) {
		t.Fatalf("read of [2,6) with Redis holding 4: %v, want %v", got, newestFirst[2:6])
	}
	if got := read(6, 16); len(got) != 0 {
		t.Fatalf("a page past the end: %v, want none", got)
	}
	if got, err := s.ReadUserTimeline(ctx, 0, 99, 0, 10); err != nil || len(got) != 0 {
		t.Fatalf("a user with no document: %v %v, want an empty page", got, err)
	}
}

// TestUserTimelineSkipsPostsRedisAlreadyGave: a post composed between the
// Redis read and the MongoDB read shifts MongoDB's list by one; the page
// must not hold a post twice.
func TestUserTimelineSkipsPostsRedisAlreadyGave(t *testing.T) {
	ctx := context.Background()
	redis := store.NewMemoryTimelines()
	mongo := store.NewMemoryCollection()
	s := &UserTimelineService{Timelines: redis, Posts: mongo, PostStorage: echoPosts{}}
	for i := range int64(3) {
		if err := s.WriteUserTimeline(ctx, 0, 100+i, 1, 1000+i); err != nil {
			t.Fatal(err)
		}
	}
	// A newer post only MongoDB has yet.
	if err := mongo.Push(ctx, "1", store.Column{Field: "post_ids", Values: []any{int64(200)}}, store.Column{Field: "timestamps", Values: []any{int64(2000)}}); err != nil {
		t.Fatal(err)
	}
	posts, err := s.ReadUserTimeline(ctx, 0, 1, 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	got := postIDs(posts)
	seen := map[int64]bool{}
	for _, id := range got {
		if seen[id] {
			t.Fatalf("page %v holds post %d twice", got, id)
		}
		seen[id] = true
	}
	if !slices.Equal(got[:3], []int64{102, 101, 100}) {
		t.Fatalf("page %v does not start with Redis's three posts", got)
	}
}

// userTimelineDoc is an author's MongoDB document as timeline.List writes it.
type userTimelineDoc struct {
	ID         string  `bson:"_id"`
	PostIDs    []int64 `bson:"post_ids"`
	Timestamps []int64 `bson:"timestamps"`
}

// racyPushes is a collection whose Push reads and rewrites the document
// outside any lock, as FerretDB does, so that concurrent pushes to one
// document lose values; it counts writes and the most in flight at once.
type racyPushes struct {
	*store.MemoryCollection
	mu                     sync.Mutex
	writes, inFlight, most int
}

func (c *racyPushes) Push(ctx context.Context, id string, columns ...store.Column) error {
	c.mu.Lock()
	c.writes++
	c.inFlight++
	c.most = max(c.most, c.inFlight)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.inFlight--
		c.mu.Unlock()
	}()
	var doc userTimelineDoc
	if err := c.Get(ctx, id, &doc); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	time.Sleep(2 * time.Millisecond) // the window in which another push reads the same old document
	doc.ID = id
	for _, col := range columns {
		for _, v := range col.Values {
			switch col.Field {
			case "post_ids":
				doc.PostIDs = append(doc.PostIDs, v.(int64))
			case "timestamps":
				doc.Timestamps = append(doc.Timestamps, v.(int64))
			}
		}
	}
	return c.Put(ctx, doc)
}

// TestUserTimelineConcurrentWritesLoseNothing: the loader composes one
// user's posts concurrently; on a store that loses concurrent updates of a
// document, every post must still reach MongoDB, in fewer writes than posts.
func TestUserTimelineConcurrentWritesLoseNothing(t *testing.T) {
	ctx := context.Background()
	mongo := &racyPushes{MemoryCollection: store.NewMemoryCollection()}
	s := &UserTimelineService{Timelines: store.NewMemoryTimelines(), Posts: mongo, PostStorage: echoPosts{}}
	const posts = 50
	var wg sync.WaitGroup
	errs := make(chan error, posts)
	for i := range int64(posts) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.WriteUserTimeline(ctx, 0, 100+i, 3, 1000+i)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var doc userTimelineDoc
	if err := mongo.Get(ctx, "3", &doc); err != nil {
		t.Fatal(err)
	}
	if min(len(doc.PostIDs), len(doc.Timestamps)) != posts {
		t.Fatalf("MongoDB holds %d of %d posts: concurrent pushes lost some", min(len(doc.PostIDs), len(doc.Timestamps)), posts)
	}
	if mongo.most != 1 || mongo.writes >= posts {
		t.Fatalf("%d writes, at most %d at once; want one at a time and fewer writes than the %d posts", mongo.writes, mongo.most, posts)
	}
	t.Logf("%d posts in %d writes", posts, mongo.writes)
}
