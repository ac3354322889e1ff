package socialnetwork

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/store"
)

// pausedGet is a collection whose next Get of one key reads the document,
// then waits for release before answering with what it read: a read that
// took the old list just before a write replaced it.
type pausedGet struct {
	store.Collection
	mu      sync.Mutex
	key     string
	reading chan struct{}
	release chan struct{}
}

func (p *pausedGet) Get(ctx context.Context, id string, out any) error {
	p.mu.Lock()
	armed := p.key == id
	if armed {
		p.key = ""
	}
	p.mu.Unlock()
	err := p.Collection.Get(ctx, id, out)
	if armed {
		close(p.reading)
		<-p.release
	}
	return err
}

func waitWritten(t *testing.T, svc *SocialGraphService, key string, want []int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ids, err := svc.storedList(context.Background(), key)
		svc.mu.Lock()
		idle := len(svc.writing) == 0 && len(svc.pending) == 0
		svc.mu.Unlock()
		if err == nil && idle && slices.Equal(ids, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s stored as %v (%v), want %v", key, ids, err, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A follower list read while a write of it starts and ends must still hold
// the new follower: the read took the list from before the write, and by the
// time it looked at the queued changes the write had taken them away. (A
// compose-post fan-out that missed a follower this way left the social
// network's end-to-end test with an empty home timeline.)
func TestFollowersReadRacingAListWrite(t *testing.T) {
	ctx := context.Background()
	graph := &pausedGet{Collection: store.NewMemoryCollection()}
	svc := &SocialGraphService{Graph: graph, Cache: store.NewMemoryCache()}
	if err := svc.Follow(ctx, 1, 2, 1); err != nil {
		t.Fatal(err)
	}
	waitWritten(t, svc, followersKey(1), []int64{2})

	graph.mu.Lock()
	graph.key, graph.reading, graph.release = followersKey(1), make(chan struct{}), make(chan struct{})
	graph.mu.Unlock()
	got := make(chan []int64, 1)
	go func() {
		ids, err := svc.GetFollowers(ctx, 1, 1)
		if err != nil {
			t.Error(err)
		}
		got <- ids
	}()
	<-graph.reading // the reader holds [2]
	if err := svc.Follow(ctx, 1, 3, 1); err != nil {
		t.Fatal(err)
	}
	waitWritten(t, svc, followersKey(1), []int64{2, 3})
	close(graph.release)
	if ids := <-got; !slices.Equal(ids, []int64{2, 3}) {
		t.Errorf("followers read across the write = %v, want [2 3]", ids)
	}
	// and what it cached, if anything, is the new list
	if ids, err := svc.GetFollowers(ctx, 1, 1); err != nil || !slices.Equal(ids, []int64{2, 3}) {
		t.Errorf("followers read after = %v, %v", ids, err)
	}
}
