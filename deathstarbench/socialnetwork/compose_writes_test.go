package socialnetwork

import (
	"context"
	"strings"
	"testing"

	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

// bulkRecorder counts InsertMany calls and refuses chosen indexes of the
// first one as duplicates, as a short URL drawn twice would be.
type bulkRecorder struct {
	*store.MemoryCollection
	batches       [][]any
	refuseAtFirst []int
}

func (b *bulkRecorder) InsertMany(ctx context.Context, docs []any) ([]int, error) {
	b.batches = append(b.batches, docs)
	if len(b.batches) == 1 && len(b.refuseAtFirst) > 0 {
		var keep []any
		for i, doc := range docs {
			refused := false
			for _, r := range b.refuseAtFirst {
				refused = refused || r == i
			}
			if !refused {
				keep = append(keep, doc)
			}
		}
		if _, err := b.MemoryCollection.InsertMany(ctx, keep); err != nil {
			return nil, err
		}
		return b.refuseAtFirst, nil
	}
	return b.MemoryCollection.InsertMany(ctx, docs)
}

func TestShortenUrlsStoresAPostsURLsInOneBulkInsert(t *testing.T) {
	ctx := context.Background()
	urls := []string{"http://a.example/1", "http://b.example/2", "http://c.example/3"}
	coll := &bulkRecorder{MemoryCollection: store.NewMemoryCollection()}
	svc := &URLShortenService{URLs: coll, Cache: store.NewMemoryCache()}
	got, err := svc.ShortenUrls(ctx, 1, urls)
	if err != nil {
		t.Fatal(err)
	}
	if len(coll.batches) != 1 || len(coll.batches[0]) != len(urls) {
		t.Fatalf("want one insert of %d URLs, as DeathStarBench's bulk write; got batches of %v", len(urls), batchSizes(coll.batches))
	}
	for i, u := range got {
		var doc urlDoc
		if u.ExpandedURL != urls[i] || !strings.HasPrefix(u.ShortenedURL, ShortURLPrefix) || coll.Get(ctx, u.ShortenedURL, &doc) != nil || doc.ExpandedURL != urls[i] {
			t.Errorf("url %d: %+v, stored %+v", i, u, doc)
		}
	}
}

func TestShortenUrlsDrawsARefusedShortFormAgain(t *testing.T) {
	ctx := context.Background()
	urls := []string{"http://a.example/1", "http://b.example/2", "http://c.example/3"}
	coll := &bulkRecorder{MemoryCollection: store.NewMemoryCollection(), refuseAtFirst: []int{1}}
	svc := &URLShortenService{URLs: coll, Cache: store.NewMemoryCache()}
	got, err := svc.ShortenUrls(ctx, 1, urls)
	if err != nil {
		t.Fatal(err)
	}
	if sizes := batchSizes(coll.batches); len(sizes) != 2 || sizes[0] != 3 || sizes[1] != 1 {
		t.Fatalf("want the refused URL alone in a second insert; batches of %v", sizes)
	}
	retried := coll.batches[1][0].(urlDoc)
	if retried.ExpandedURL != urls[1] || got[1].ShortenedURL != retried.ShortenedURL {
		t.Fatalf("the second insert holds %+v; the answer says %+v", retried, got[1])
	}
	for i, u := range got {
		var doc urlDoc
		if err := coll.Get(ctx, u.ShortenedURL, &doc); err != nil || doc.ExpandedURL != urls[i] {
			t.Errorf("url %d: %+v not stored (%v)", i, u, err)
		}
	}
}

func TestComposeMediaPairsIDsWithTypes(t *testing.T) {
	media, err := MediaService{}.ComposeMedia(context.Background(), 1, []string{"png", "jpg"}, []int64{7, 8})
	if err != nil || len(media) != 2 || media[0].MediaID != 7 || media[0].MediaType != "png" || media[1].MediaID != 8 || media[1].MediaType != "jpg" {
		t.Fatalf("media %v, %v", media, err)
	}
	if _, err := (MediaService{}).ComposeMedia(context.Background(), 1, []string{"png"}, []int64{7, 8}); err == nil || !strings.Contains(err.Error(), "not equal") {
		t.Fatalf("mismatched lists: %v", err)
	}
}

func batchSizes(batches [][]any) []int {
	sizes := make([]int, len(batches))
	for i, b := range batches {
		sizes[i] = len(b)
	}
	return sizes
}

func TestStorePostWritesMongoOnlyAndTheFirstReadCaches(t *testing.T) {
	ctx := context.Background()
	cache := store.NewMemoryCache()
	svc := &PostStorageService{Posts: store.NewMemoryCollection(), Cache: cache, MaxParallelReads: 2}
	post := &sn.Post{PostID: 42, Creator: &sn.Creator{UserID: 1, Username: "username_1"}, Text: "hi", Timestamp: 1000}
	if err := svc.StorePost(ctx, 1, post); err != nil {
		t.Fatal(err)
	}
	key := postCacheKey(42)
	if cached, _ := cache.GetMulti(ctx, []string{key}); len(cached) != 0 {
		t.Fatal("StorePost filled memcached; DeathStarBench's writes MongoDB only")
	}
	got, err := svc.ReadPosts(ctx, 1, []int64{42})
	if err != nil || len(got) != 1 || got[0].Text != "hi" {
		t.Fatalf("read %v, %v", got, err)
	}
	if cached, _ := cache.GetMulti(ctx, []string{key}); len(cached) != 1 {
		t.Fatal("a read that missed memcached did not fill it")
	}
}
