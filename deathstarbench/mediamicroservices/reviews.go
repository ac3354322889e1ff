package mediamicroservices

import (
	"context"
	"errors"
	"strconv"

	"github.com/orchbench/orchbench/deathstarbench/internal/timeline"
	mm "github.com/orchbench/orchbench/deathstarbench/mediamicroservices/thrift/gen-go/mediamicro"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

// ReviewStorageService implements mm.ReviewStorageService: reviews by ID
// in MongoDB, read through memcached.
type ReviewStorageService struct{ Reviews records[mm.Review] }

// StoreReview implements mm.ReviewStorageService.
func (s *ReviewStorageService) StoreReview(ctx context.Context, _ int64, review *mm.Review) error {
	if review == nil {
		return badRequest("no review")
	}
	err := s.Reviews.insert(ctx, strconv.FormatInt(review.ReviewID, 10), *review)
	if errors.Is(err, store.ErrDuplicate) {
		return serviceError(mm.ErrorKind_CONFLICT, "Review %d already existed", review.ReviewID)
	}
	if err != nil {
		return internalError("store review", err)
	}
	return nil
}

// ReadReviews implements mm.ReviewStorageService: the reviews in the order
// asked; an ID that names no review fails the call, as in the original.
func (s *ReviewStorageService) ReadReviews(ctx context.Context, _ int64, reviewIDs []int64) ([]*mm.Review, error) {
	ids := make([]string, len(reviewIDs))
	for i, id := range reviewIDs {
		ids[i] = strconv.FormatInt(id, 10)
	}
	found, err := s.Reviews.get(ctx, ids)
	if err != nil {
		return nil, internalError("read reviews", err)
	}
	out := make([]*mm.Review, len(ids))
	for i, id := range ids {
		review, ok := found[id]
		if !ok {
			return nil, notFound("Review %s not found", id)
		}
		out[i] = &review
	}
	return out, nil
}

// reviewList is the user-review and movie-review services: one list of
// review IDs per user or movie (timeline.List: MongoDB and a Redis sorted
// set), read newest first and resolved by review-storage.
type reviewList struct {
	list          *timeline.List
	ReviewStorage mm.ReviewStorageService
	// prefix begins the Redis keys.
	prefix string
}

func newReviewList(docs store.Collection, cache store.Timelines, reviewStorage mm.ReviewStorageService, prefix string) reviewList {
	return reviewList{
		list:          &timeline.List{Cache: cache, Docs: docs, IDsField: "review_ids", TimestampsField: "timestamps"},
		ReviewStorage: reviewStorage,
		prefix:        prefix,
	}
}

func (l reviewList) upload(ctx context.Context, owner string, reviewID, timestamp int64) error {
	entry := store.TimelineEntry{PostID: reviewID, Timestamp: timestamp}
	if err := l.list.Append(ctx, owner, l.prefix+owner, entry); err != nil {
		return internalError("append review", err)
	}
	return nil
}

func (l reviewList) read(ctx context.Context, reqID int64, owner string, start, stop int32) ([]*mm.Review, error) {
	if start < 0 || stop <= start {
		return []*mm.Review{}, nil // the original answers nothing for such a page
	}
	var reviews []*mm.Review
	err := l.list.Page(ctx, owner, l.prefix+owner, int(start), int(stop), func(ids []int64) error {
		if len(ids) == 0 {
			reviews = []*mm.Review{}
			return nil
		}
		var err error
		reviews, err = l.ReviewStorage.ReadReviews(ctx, reqID, ids)
		return err
	})
	if err != nil {
		return nil, internalError("read reviews", err)
	}
	return reviews, nil
}

// UserReviewService implements mm.UserReviewService.
type UserReviewService struct{ reviewList }

// NewUserReviewService returns the service on its stores.
func NewUserReviewService(docs store.Collection, cache store.Timelines, reviewStorage mm.ReviewStorageService) *UserReviewService {
	return &UserReviewService{newReviewList(docs, cache, reviewStorage, "user-review:")}
}

// UploadUserReview implements mm.UserReviewService.
func (s *UserReviewService) UploadUserReview(ctx context.Context, _ int64, userID, reviewID, timestamp int64) error {
	return s.upload(ctx, strconv.FormatInt(userID, 10), reviewID, timestamp)
}

// ReadUserReviews implements mm.UserReviewService.
func (s *UserReviewService) ReadUserReviews(ctx context.Context, reqID int64, userID int64, start, stop int32) ([]*mm.Review, error) {
	return s.read(ctx, reqID, strconv.FormatInt(userID, 10), start, stop)
}

// MovieReviewService implements mm.MovieReviewService.
type MovieReviewService struct{ reviewList }

// NewMovieReviewService returns the service on its stores.
func NewMovieReviewService(docs store.Collection, cache store.Timelines, reviewStorage mm.ReviewStorageService) *MovieReviewService {
	return &MovieReviewService{newReviewList(docs, cache, reviewStorage, "movie-review:")}
}

// UploadMovieReview implements mm.MovieReviewService.
func (s *MovieReviewService) UploadMovieReview(ctx context.Context, _ int64, movieID string, reviewID, timestamp int64) error {
	return s.upload(ctx, movieID, reviewID, timestamp)
}

// ReadMovieReviews implements mm.MovieReviewService.
func (s *MovieReviewService) ReadMovieReviews(ctx context.Context, reqID int64, movieID string, start, stop int32) ([]*mm.Review, error) {
	return s.read(ctx, reqID, movieID, start, stop)
}
