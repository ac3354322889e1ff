package socialnetwork

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/orchbench/orchbench/deathstarbench/internal/uniqueid"
	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

func TestJWTRoundTripAndTampering(t *testing.T) {
	secret := []byte("s3cret")
	now := time.Unix(1_700_000_000, 0)
	claims := TokenClaims{UserID: "42", Username: "username_42", IssuedAt: now.Unix(), ExpiresAt: now.Add(time.Hour).Unix()}
	token, err := SignToken(claims, secret)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(token, ".") != 2 || strings.ContainsAny(token, "+/=") {
		t.Fatalf("token %q is not compact base64url JWT", token)
	}
	got, err := VerifyToken(token, secret, now)
	if err != nil || got != claims {
		t.Fatalf("VerifyToken = %+v, %v", got, err)
	}
	if _, err := VerifyToken(token, []byte("other"), now); err == nil {
		t.Error("wrong secret accepted")
	}
	parts := strings.Split(token, ".")
	forged, _ := SignToken(TokenClaims{UserID: "1", Username: "admin"}, []byte("x"))
	if _, err := VerifyToken(parts[0]+"."+strings.Split(forged, ".")[1]+"."+parts[2], secret, now); err == nil {
		t.Error("swapped payload accepted")
	}
	if _, err := VerifyToken("eyJhbGciOiJub25lIn0."+parts[1]+".", secret, now); err == nil {
		t.Error("alg none accepted")
	}
	if _, err := VerifyToken(token, secret, now.Add(2*time.Hour)); err == nil {
		t.Error("expired token accepted")
	}
}

func TestKnownJWTVector(t *testing.T) {
	// RFC 7515 style check: the signature of a fixed input must not change.
	token, _ := SignToken(TokenClaims{UserID: "1", Username: "u", IssuedAt: 1, ExpiresAt: 2}, []byte("k"))
	const want = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ1c2VyX2lkIjoiMSIsInVzZXJuYW1lIjoidSIsImlhdCI6MSwiZXhwIjoyfQ."
	if !strings.HasPrefix(token, want) {
		t.Fatalf("token %s does not start with %s", token, want)
	}
}

func TestParseMentions(t *testing.T) {
	cases := []struct {
		text string
		want []string
	}{
		{"hi @username_1 and @user-2!", []string{"username_1", "user-2"}},
		{"@a @a @b", []string{"a", "b"}},
		{"mail me at someone@example.com", nil},
		{"@", nil},
		{"no mentions", nil},
	}
	for _, c := range cases {
		got := ParseMentions(c.text)
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("ParseMentions(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestParseURLs(t *testing.T) {
	got := ParseURLs("see http://a.example/x?y=1 and https://b.example, ftp://no http://a.example/x?y=1")
	want := []string{"http://a.example/x?y=1", "https://b.example,", "http://a.example/x?y=1"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("ParseURLs = %q, want %q", got, want)
	}
}

func TestURLShortenRoundTrip(t *testing.T) {
	svc := &URLShortenService{URLs: store.NewMemoryCollection(), Cache: store.NewMemoryCache()}
	ctx := context.Background()
	long := []string{"http://example.com/a", "http://example.com/a", "https://example.org/b?c=d"}
	short, err := svc.ShortenUrls(ctx, 1, long)
	if err != nil {
		t.Fatal(err)
	}
	if len(short) != len(long) {
		t.Fatalf("got %d short URLs for %d", len(short), len(long))
	}
	seen := map[string]bool{}
	for i, u := range short {
		code := strings.TrimPrefix(u.ShortenedURL, ShortURLPrefix)
		if !strings.HasPrefix(u.ShortenedURL, ShortURLPrefix) || len(code) != shortURLCodeLength {
			t.Fatalf("short URL %q has the wrong form", u.ShortenedURL)
		}
		if strings.Trim(code, base62Alphabet) != "" {
			t.Fatalf("short URL code %q is not base 62", code)
		}
		if seen[u.ShortenedURL] {
			t.Fatalf("short URL %q issued twice", u.ShortenedURL)
		}
		seen[u.ShortenedURL] = true
		if u.ExpandedURL != long[i] {
			t.Fatalf("expanded %q, want %q", u.ExpandedURL, long[i])
		}
	}
	// Expansion from mongo (cold cache) and then from the cache.
	query := []string{short[2].ShortenedURL, "http://short-url.com/unknown000", short[0].ShortenedURL}
	for round := range 2 {
		expanded, err := svc.ExpandUrls(ctx, 1, query)
		if err != nil {
			t.Fatal(err)
		}
		if expanded[0] != long[2] || expanded[1] != "" || expanded[2] != long[0] {
			t.Fatalf("round %d: ExpandUrls = %q", round, expanded)
		}
	}
}

func TestTextReplacesURLsInOrder(t *testing.T) {
	text := "a http://x.io/1 b http://x.io/1 c http://x.io/12"
	urls := ParseURLs(text)
	short, _ := (&URLShortenService{URLs: store.NewMemoryCollection(), Cache: store.NewMemoryCache()}).ShortenUrls(context.Background(), 1, urls)
	got := replaceInOrder(text, urls, short)
	want := "a " + short[0].ShortenedURL + " b " + short[1].ShortenedURL + " c " + short[2].ShortenedURL
	if got != want {
		t.Fatalf("replaceInOrder = %q, want %q", got, want)
	}
}

func TestStatusOfErrors(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{badRequest("x"), http.StatusBadRequest},
		{notFound("x"), http.StatusNotFound},
		{serviceError(sn.ErrorKind_UNAUTHORIZED, "x"), http.StatusUnauthorized},
		{serviceError(sn.ErrorKind_CONFLICT, "x"), http.StatusConflict},
		{serviceError(sn.ErrorKind_INTERNAL, "x"), http.StatusInternalServerError},
		{serviceError(sn.ErrorKind(42), "x"), http.StatusInternalServerError},
		{fmt.Errorf("upstream: %w", notFound("x")), http.StatusNotFound},
		{errors.New("connection refused"), http.StatusInternalServerError},
		{context.DeadlineExceeded, http.StatusInternalServerError},
		{thrift.NewTApplicationException(thrift.UNKNOWN_METHOD, "Unknown function GetUsername"), http.StatusInternalServerError},
	}
	for _, c := range cases {
		if got := statusOf(c.err); got != c.want {
			t.Errorf("statusOf(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

func errorKind(t *testing.T, err error) sn.ErrorKind {
	t.Helper()
	var se *sn.ServiceError
	if !errors.As(err, &se) {
		t.Fatalf("%v is not a ServiceError", err)
	}
	if se.Message == "" {
		t.Fatalf("%v has no message", err)
	}
	return se.Kind
}

func TestUserServiceConflictAndGetUsername(t *testing.T) {
	ctx := context.Background()
	users := store.NewMemoryCollection()
	svc := &UserService{Users: users, Cache: store.NewMemoryCache(), SocialGraph: &SocialGraphService{}, IDs: uniqueid.New(1)}
	if err := svc.RegisterUserWithId(ctx, 1, "f", "l", "alice", "pw", 42); err != nil {
		t.Fatal(err)
	}
	if kind := errorKind(t, svc.RegisterUserWithId(ctx, 1, "f", "l", "alice", "other", 43)); kind != sn.ErrorKind_CONFLICT {
		t.Fatalf("second registration of alice: kind %v, want CONFLICT", kind)
	}
	if name, err := svc.GetUsername(ctx, 1, 42); err != nil || name != "alice" {
		t.Fatalf("GetUsername(42) = %q, %v", name, err)
	}
	_, err := svc.GetUsername(ctx, 1, 43)
	if kind := errorKind(t, err); kind != sn.ErrorKind_NOT_FOUND {
		t.Fatalf("GetUsername of the rejected duplicate's ID: kind %v, want NOT_FOUND", kind)
	}
	// The answer is cached: found without the collection.
	if err := users.Delete(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if name, err := svc.GetUsername(ctx, 1, 42); err != nil || name != "alice" {
		t.Fatalf("GetUsername(42) from the cache = %q, %v", name, err)
	}
}

func TestComposeRejectsBadPostBeforeFanOut(t *testing.T) {
	// No upstreams: reaching any of them would panic.
	svc := &ComposePostService{}
	ctx := context.Background()
	cases := []struct {
		name       string
		text       string
		mediaIDs   []int64
		mediaTypes []string
		postType   sn.PostType
		want       string
	}{
		{"text over the limit", strings.Repeat("a", MaxTextBytes+1), nil, nil, sn.PostType_POST, "limit of 4096 bytes"},
		{"unknown post type", "hi", nil, nil, sn.PostType(4), "unknown post_type 4"},
		{"unequal media lists", "hi", []int64{1}, nil, sn.PostType_DM, "not equal"},
	}
	for _, c := range cases {
		err := svc.ComposePost(ctx, 1, "u", 1, c.text, c.mediaIDs, c.mediaTypes, c.postType)
		if kind := errorKind(t, err); kind != sn.ErrorKind_BAD_REQUEST || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v (kind %v), want BAD_REQUEST mentioning %q", c.name, err, kind, c.want)
		}
	}
	if err := CheckCompose(strings.Repeat("a", MaxTextBytes), []int64{1}, []string{"png"}, sn.PostType_REPLY); err != nil {
		t.Errorf("a post at the limit: %v", err)
	}
}
