package socialnetwork

import (
	"context"
	"regexp"
	"strings"
	"sync"

	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

var (
	// A mention is @ and a username of letters, digits, '_' or '-'; the @
	// must not follow a word character, so e-mail addresses are not mentions.
	mentionPattern = regexp.MustCompile(`(?:^|[^A-Za-z0-9_])@([A-Za-z0-9_-]+)`)
	// A URL runs from its scheme to the next white space.
	urlPattern = regexp.MustCompile(`https?://[^\s]+`)
)

// ParseMentions returns the distinct usernames mentioned in text, in order.
func ParseMentions(text string) []string {
	var names []string
	seen := map[string]bool{}
	for _, match := range mentionPattern.FindAllStringSubmatch(text, -1) {
		if name := match[1]; !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	return names
}

// ParseURLs returns the URLs in text, in order, repeats included so each
// occurrence can be replaced.
func ParseURLs(text string) []string {
	return urlPattern.FindAllString(text, -1)
}

// UserMentionService implements sn.UserMentionService on the user
// service's cache and collection.
type UserMentionService struct {
	Users store.Collection
	Cache store.Cache
}

// ResolveMentions implements sn.UserMentionService; usernames that are not
// registered are dropped, since they mention nobody.
func (s *UserMentionService) ResolveMentions(ctx context.Context, _ int64, usernames []string) ([]*sn.UserMention, error) {
	users, err := loadUsers(ctx, s.Cache, s.Users, usernames)
	if err != nil {
		return nil, err
	}
	mentions := make([]*sn.UserMention, 0, len(users))
	for _, name := range usernames {
		if record, ok := users[name]; ok {
			mentions = append(mentions, &sn.UserMention{UserID: record.UserID, Username: name})
		}
	}
	return mentions, nil
}

// TextService implements sn.TextService: it extracts URLs and mentions,
// has them shortened and resolved in parallel, and puts the short URLs in
// the text.
type TextService struct {
	URLShorten  sn.UrlShortenService
	UserMention sn.UserMentionService
}

// ProcessText implements sn.TextService.
func (s *TextService) ProcessText(ctx context.Context, reqID int64, text string) (*sn.ComposedText, error) {
	urls := ParseURLs(text)
	usernames := ParseMentions(text)

	var (
		wg                     sync.WaitGroup
		shortened              []*sn.URL
		mentions               []*sn.UserMention
		shortenErr, mentionErr error
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		shortened, shortenErr = s.URLShorten.ShortenUrls(ctx, reqID, urls)
	}()
	go func() {
		defer wg.Done()
		mentions, mentionErr = s.UserMention.ResolveMentions(ctx, reqID, usernames)
	}()
	wg.Wait()
	if shortenErr != nil {
		return nil, internalError("url-shorten", shortenErr)
	}
	if mentionErr != nil {
		return nil, internalError("user-mention", mentionErr)
	}
	if len(shortened) != len(urls) {
		return nil, serviceError(sn.ErrorKind_INTERNAL, "url-shorten returned %d URLs for %d", len(shortened), len(urls))
	}
	return &sn.ComposedText{
		Text:         replaceInOrder(text, urls, shortened),
		UserMentions: mentions,
		Urls:         shortened,
	}, nil
}

// replaceInOrder swaps each occurrence of urls[i] for its short form,
// scanning forward so a URL that is a prefix of a later one is not touched twice.
func replaceInOrder(text string, urls []string, shortened []*sn.URL) string {
	var out strings.Builder
	rest := text
	for i, url := range urls {
		at := strings.Index(rest, url)
		if at < 0 {
			continue
		}
		out.WriteString(rest[:at])
		out.WriteString(shortened[i].ShortenedURL)
		rest = rest[at+len(url):]
	}
	out.WriteString(rest)
	return out.String()
}
