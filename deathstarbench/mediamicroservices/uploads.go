package mediamicroservices

import (
	"context"
	"errors"
	"strconv"

	"golang.org/x/sync/errgroup"

	"github.com/orchbench/orchbench/deathstarbench/internal/password"
	"github.com/orchbench/orchbench/deathstarbench/internal/uniqueid"
	mm "github.com/orchbench/orchbench/deathstarbench/mediamicroservices/thrift/gen-go/mediamicro"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

// The services here each take one part of a review from the front end,
// resolve it, and upload it to compose-review: unique-id, text, user,
// movie-id (and, from it, rating).

// UniqueIDService implements mm.UniqueIdService.
type UniqueIDService struct {
	IDs           *uniqueid.Generator
	ComposeReview mm.ComposeReviewService
}

// UploadUniqueId makes the review's ID.
func (s *UniqueIDService) UploadUniqueId(ctx context.Context, reqID int64) error {
	return s.ComposeReview.UploadUniqueId(ctx, reqID, s.IDs.Next())
}

// TextService implements mm.TextService: the text goes on as it came (the
// original's text service does nothing else with a review's text).
type TextService struct{ ComposeReview mm.ComposeReviewService }

// UploadText implements mm.TextService.
func (s *TextService) UploadText(ctx context.Context, reqID int64, text string) error {
	return s.ComposeReview.UploadText(ctx, reqID, text)
}

// userRecord is a user as stored, keyed by username (every lookup is by
// username).
type userRecord struct {
	UserID       int64  `bson:"user_id"`
	FirstName    string `bson:"first_name"`
	LastName     string `bson:"last_name"`
	Salt         string `bson:"salt"`
	PasswordHash string `bson:"password"`
}

// UserService implements mm.UserService.
type UserService struct {
	Users         records[userRecord]
	IDs           *uniqueid.Generator
	ComposeReview mm.ComposeReviewService
}

// RegisterUser implements mm.UserService.
func (s *UserService) RegisterUser(ctx context.Context, _ int64, firstName, lastName, username, secret string) error {
	if username == "" || secret == "" {
		return badRequest("username and password must not be empty")
	}
	salt := password.NewSalt()
	record := userRecord{UserID: s.IDs.Next(), FirstName: firstName, LastName: lastName, Salt: salt, PasswordHash: password.Hash(secret, salt)}
	err := s.Users.insert(ctx, username, record)
	if errors.Is(err, store.ErrDuplicate) {
		// The original's wording; the loader relies on it to skip.
		return serviceError(mm.ErrorKind_CONFLICT, "User %s already existed", username)
	}
	if err != nil {
		return internalError("store user", err)
	}
	return nil
}

func (s *UserService) lookup(ctx context.Context, username string) (userRecord, error) {
	record, ok, err := s.Users.getOne(ctx, username)
	if err != nil {
		return record, internalError("read user", err)
	}
	if !ok {
		return record, notFound("User %s doesn't exist", username)
	}
	return record, nil
}

// UploadUserWithUsername implements mm.UserService. As in the original, a
// review names its user without proving the password.
func (s *UserService) UploadUserWithUsername(ctx context.Context, reqID int64, username string) error {
	record, err := s.lookup(ctx, username)
	if err != nil {
		return err
	}
	return s.ComposeReview.UploadUserId(ctx, reqID, record.UserID)
}

// GetUser implements mm.UserService.
func (s *UserService) GetUser(ctx context.Context, _ int64, username string) (*mm.User, error) {
	record, err := s.lookup(ctx, username)
	if err != nil {
		return nil, err
	}
	return &mm.User{UserID: record.UserID, FirstName: record.FirstName, LastName: record.LastName, Username: username}, nil
}

// MovieIDService implements mm.MovieIdService: titles to movie IDs.
type MovieIDService struct {
	Movies        records[string]
	ComposeReview mm.ComposeReviewService
	Rating        mm.RatingService
}

// RegisterMovieId implements mm.MovieIdService.
func (s *MovieIDService) RegisterMovieId(ctx context.Context, _ int64, title, movieID string) error {
	if title == "" || movieID == "" {
		return badRequest("title and movie_id must not be empty")
	}
	err := s.Movies.insert(ctx, title, movieID)
	if errors.Is(err, store.ErrDuplicate) {
		return serviceError(mm.ErrorKind_CONFLICT, "Movie %s already existed", title)
	}
	if err != nil {
		return internalError("store movie id", err)
	}
	return nil
}

// GetMovieId implements mm.MovieIdService.
func (s *MovieIDService) GetMovieId(ctx context.Context, _ int64, title string) (string, error) {
	movieID, ok, err := s.Movies.getOne(ctx, title)
	if err != nil {
		return "", internalError("read movie id", err)
	}
	if !ok {
		return "", notFound("Movie %s is not registered", title)
	}
	return movieID, nil
}

// UploadMovieId implements mm.MovieIdService: the movie ID to
// compose-review and the rating to the rating service, in parallel.
func (s *MovieIDService) UploadMovieId(ctx context.Context, reqID int64, title string, rating int32) error {
	movieID, err := s.GetMovieId(ctx, reqID, title)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.ComposeReview.UploadMovieId(gctx, reqID, movieID) })
	g.Go(func() error { return s.Rating.UploadRating(gctx, reqID, movieID, rating) })
	return g.Wait()
}

// RatingService implements mm.RatingService: each movie's sum and count of
// ratings in Redis (the original's "uncommitted" tally, never committed).
type RatingService struct {
	Tallies       store.Tallies
	ComposeReview mm.ComposeReviewService
}

func ratingKeys(movieID string) (sum, count string) {
	return movieID + ":uncommit_sum", movieID + ":uncommit_num"
}

// UploadRating implements mm.RatingService.
func (s *RatingService) UploadRating(ctx context.Context, reqID int64, movieID string, rating int32) error {
	sum, count := ratingKeys(movieID)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.ComposeReview.UploadRating(gctx, reqID, rating) })
	g.Go(func() error {
		if err := s.Tallies.IncrBy(gctx, map[string]int64{sum: int64(rating), count: 1}); err != nil {
			return internalError("add rating to redis", err)
		}
		return nil
	})
	return g.Wait()
}

// ReadRating implements mm.RatingService.
func (s *RatingService) ReadRating(ctx context.Context, _ int64, movieID string) (*mm.RatingTally, error) {
	sum, count := ratingKeys(movieID)
	values, err := s.Tallies.Ints(ctx, []string{sum, count})
	if err != nil {
		return nil, internalError("read rating from redis", err)
	}
	return &mm.RatingTally{MovieID: movieID, Sum: values[0], Count: values[1]}, nil
}

func formatInt(n int64) []byte { return strconv.AppendInt(nil, n, 10) }
