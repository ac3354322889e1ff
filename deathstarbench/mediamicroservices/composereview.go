package mediamicroservices

import (
	"context"
	"errors"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"

	mm "github.com/orchbench/orchbench/deathstarbench/mediamicroservices/thrift/gen-go/mediamicro"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

// reviewParts is how many parts make a review: its ID, text, rating, movie
// and user, each uploaded by its own service.
const reviewParts = 5

// partTTL is how long memcached keeps a part and the counter: the
// original's 10 s. Parts of a request slower than that are lost, and the
// request fails, as the original's does.
const partTTL = 10 * time.Second

// Part names, the suffixes of the memcached keys "<req_id>:<part>".
const (
	partReviewID = "review_id"
	partText     = "text"
	partRating   = "rating"
	partMovieID  = "movie_id"
	partUserID   = "user_id"
	partCounter  = "counter"
)

// ComposeReviewService implements mm.ComposeReviewService: a rendezvous of
// a review's five parts in memcached. Each upload adds its part under the
// request's key with a short TTL and increments the request's counter; the
// upload that brings the count to five reads the parts back, and stores the
// review and appends it to the user's and the movie's lists, in parallel.
// Replicas need nothing in common but the memcached.
type ComposeReviewService struct {
	Parts         store.Rendezvous
	ReviewStorage mm.ReviewStorageService
	UserReview    mm.UserReviewService
	MovieReview   mm.MovieReviewService
	// Now stamps the review; time.Now when nil.
	Now func() time.Time
}

func partKey(reqID int64, part string) string {
	return strconv.FormatInt(reqID, 10) + ":" + part
}

// upload adds one part and, when it was the last, composes the review.
func (s *ComposeReviewService) upload(ctx context.Context, reqID int64, part string, value []byte) error {
	counter := partKey(reqID, partCounter)
	if _, err := s.Parts.Add(ctx, counter, []byte("0"), partTTL); err != nil {
		return internalError("initialise the counter of request "+strconv.FormatInt(reqID, 10), err)
	}
	added, err := s.Parts.Add(ctx, partKey(reqID, part), value, partTTL)
	if err != nil {
		return internalError("store "+part+" of request "+strconv.FormatInt(reqID, 10), err)
	}
	if !added {
		// The part came twice (a retried call): it does not count again,
		// as in the original.
		return nil
	}
	count, err := s.Parts.Increment(ctx, counter, 1)
	if errors.Is(err, store.ErrNotFound) {
		return internalError("count the parts of request "+strconv.FormatInt(reqID, 10), errors.New("the counter expired"))
	}
	if err != nil {
		return internalError("count the parts of request "+strconv.FormatInt(reqID, 10), err)
	}
	if count == reviewParts {
		return s.compose(ctx, reqID)
	}
	return nil
}

// compose reads the five parts back and stores the review.
func (s *ComposeReviewService) compose(ctx context.Context, reqID int64) error {
	parts := []string{partReviewID, partText, partRating, partMovieID, partUserID}
	keys := make([]string, len(parts))
	for i, part := range parts {
		keys[i] = partKey(reqID, part)
	}
	values, err := s.Parts.GetMulti(ctx, keys)
	if err != nil {
		return internalError("read the parts of request "+strconv.FormatInt(reqID, 10), err)
	}
	get := func(part string) ([]byte, error) {
		value, ok := values[partKey(reqID, part)]
		if !ok {
			return nil, serviceError(mm.ErrorKind_INTERNAL, "the %s of request %d expired before the review was complete", part, reqID)
		}
		return value, nil
	}
	integer := func(part string) (int64, error) {
		value, err := get(part)
		if err != nil {
			return 0, err
		}
		n, err := strconv.ParseInt(string(value), 10, 64)
		if err != nil {
			return 0, serviceError(mm.ErrorKind_INTERNAL, "the %s of request %d is not a number: %q", part, reqID, value)
		}
		return n, nil
	}
	review := &mm.Review{ReqID: reqID}
	var errs []error
	var rating int64
	review.ReviewID, err = integer(partReviewID)
	errs = append(errs, err)
	review.UserID, err = integer(partUserID)
	errs = append(errs, err)
	rating, err = integer(partRating)
	errs = append(errs, err)
	text, err := get(partText)
	errs = append(errs, err)
	movieID, err := get(partMovieID)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	review.Rating, review.Text, review.MovieID = int32(rating), string(text), string(movieID)
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	review.Timestamp = now().UnixMilli()

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return wrapUpstream("review-storage", s.ReviewStorage.StoreReview(gctx, reqID, review)) })
	g.Go(func() error {
		return wrapUpstream("user-review", s.UserReview.UploadUserReview(gctx, reqID, review.UserID, review.ReviewID, review.Timestamp))
	})
	g.Go(func() error {
		return wrapUpstream("movie-review", s.MovieReview.UploadMovieReview(gctx, reqID, review.MovieID, review.ReviewID, review.Timestamp))
	})
	return g.Wait()
}

// wrapUpstream names the upstream a transport error came from; a service's
// own error passes as it is.
func wrapUpstream(service string, err error) error {
	if err == nil {
		return nil
	}
	return internalError(service, err)
}

// UploadText implements mm.ComposeReviewService.
func (s *ComposeReviewService) UploadText(ctx context.Context, reqID int64, text string) error {
	return s.upload(ctx, reqID, partText, []byte(text))
}

// UploadRating implements mm.ComposeReviewService.
func (s *ComposeReviewService) UploadRating(ctx context.Context, reqID int64, rating int32) error {
	return s.upload(ctx, reqID, partRating, formatInt(int64(rating)))
}

// UploadUniqueId implements mm.ComposeReviewService.
func (s *ComposeReviewService) UploadUniqueId(ctx context.Context, reqID int64, reviewID int64) error {
	return s.upload(ctx, reqID, partReviewID, formatInt(reviewID))
}

// UploadMovieId implements mm.ComposeReviewService.
func (s *ComposeReviewService) UploadMovieId(ctx context.Context, reqID int64, movieID string) error {
	return s.upload(ctx, reqID, partMovieID, []byte(movieID))
}

// UploadUserId implements mm.ComposeReviewService.
func (s *ComposeReviewService) UploadUserId(ctx context.Context, reqID int64, userID int64) error {
	return s.upload(ctx, reqID, partUserID, formatInt(userID))
}
