package socialnetwork

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

// ShortURLPrefix starts every shortened URL, as in DeathStarBench.
const ShortURLPrefix = "http://short-url.com/"

const (
	shortURLCodeLength = 10
	base62Alphabet     = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	cacheTTL           = time.Hour
	// maxShortURLDraws bounds the draws of one URL's short form.
	maxShortURLDraws = 4
)

// NewShortURL returns ShortURLPrefix and 10 random base-62 characters
// (~59 bits, so collisions are negligible and retried anyway).
func NewShortURL() string {
	var random [shortURLCodeLength]byte
	rand.Read(random[:])
	code := make([]byte, shortURLCodeLength)
	for i, b := range random {
		// 256 is not a multiple of 62; the slight bias is harmless here.
		code[i] = base62Alphabet[int(b)%len(base62Alphabet)]
	}
	return ShortURLPrefix + string(code)
}

type urlDoc struct {
	ShortenedURL string `bson:"_id"`
	ExpandedURL  string `bson:"expanded_url"`
}

// URLShortenService implements sn.UrlShortenService: URLs in mongo, keyed by
// their short form, with memcached in front for expansion.
type URLShortenService struct {
	URLs  store.Collection
	Cache store.Cache
}

// ShortenUrls implements sn.UrlShortenService. As in DeathStarBench, every
// URL of a post goes to MongoDB in one bulk insert; a short form that
// exists already (~59 random bits: next to never) is drawn again.
func (s *URLShortenService) ShortenUrls(ctx context.Context, _ int64, urls []string) ([]*sn.URL, error) {
	result := make([]*sn.URL, len(urls))
	pending := make([]int, len(urls)) // indexes of urls not stored yet
	for i := range pending {
		pending[i] = i
	}
	for attempt := 0; len(pending) > 0; attempt++ {
		if attempt == maxShortURLDraws {
			return nil, internalError("store url", store.ErrDuplicate)
		}
		docs := make([]any, len(pending))
		for j, i := range pending {
			result[i] = &sn.URL{ShortenedURL: NewShortURL(), ExpandedURL: urls[i]}
			docs[j] = urlDoc{ShortenedURL: result[i].ShortenedURL, ExpandedURL: urls[i]}
		}
		duplicates, err := s.URLs.InsertMany(ctx, docs)
		if err != nil {
			return nil, internalError("store url", err)
		}
		next := make([]int, len(duplicates))
		for j, d := range duplicates {
			next[j] = pending[d]
		}
		pending = next
	}
	return result, nil
}

// ExpandUrls implements sn.UrlShortenService; unknown URLs expand to "".
func (s *URLShortenService) ExpandUrls(ctx context.Context, _ int64, shortened []string) ([]string, error) {
	keys := make([]string, len(shortened))
	for i, short := range shortened {
		keys[i] = "url:" + short
	}
	cached, err := s.Cache.GetMulti(ctx, keys)
	if err != nil {
		cached = map[string][]byte{} // A cache outage costs speed, not answers.
	}
	expanded := make([]string, len(shortened))
	for i, short := range shortened {
		if value, ok := cached[keys[i]]; ok {
			expanded[i] = string(value)
			continue
		}
		var doc urlDoc
		err := s.URLs.Get(ctx, short, &doc)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, internalError("read url", err)
		}
		expanded[i] = doc.ExpandedURL
		_ = s.Cache.Set(ctx, keys[i], []byte(doc.ExpandedURL), cacheTTL)
	}
	return expanded, nil
}
