package socialnetwork

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/socialnetwork/store"
	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
)

// ShortURLPrefix starts every shortened URL, as in DeathStarBench.
const ShortURLPrefix = "http://short-url.com/"

const (
	shortURLCodeLength = 10
	base62Alphabet     = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	cacheTTL           = time.Hour
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

// ShortenUrls implements sn.UrlShortenService.
func (s *URLShortenService) ShortenUrls(ctx context.Context, _ int64, urls []string) ([]*sn.URL, error) {
	result := make([]*sn.URL, 0, len(urls))
	for _, expanded := range urls {
		var doc urlDoc
		for attempt := 0; ; attempt++ {
			doc = urlDoc{ShortenedURL: NewShortURL(), ExpandedURL: expanded}
			err := s.URLs.Insert(ctx, doc)
			if err == nil {
				break
			}
			if !errors.Is(err, store.ErrDuplicate) || attempt == 3 {
				return nil, internalError("store url", err)
			}
		}
		result = append(result, &sn.URL{ShortenedURL: doc.ShortenedURL, ExpandedURL: expanded})
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
