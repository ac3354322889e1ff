package socialnetwork

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/internal/password"
	"github.com/orchbench/orchbench/deathstarbench/internal/uniqueid"
	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

// userRecord is a user as stored in mongo (keyed by username, the lookup
// every caller makes) and, JSON-encoded, in memcached under userCacheKey.
type userRecord struct {
	Username     string `bson:"_id" json:"username"`
	UserID       int64  `bson:"user_id" json:"user_id"`
	FirstName    string `bson:"first_name" json:"first_name"`
	LastName     string `bson:"last_name" json:"last_name"`
	Salt         string `bson:"salt" json:"salt"`
	PasswordHash string `bson:"password" json:"password"`
}

func userCacheKey(username string) string { return "user:" + username }

// userIDCacheKey caches GetUsername's answer; the "user-id:" prefix cannot
// collide with a "user:" key whatever the username.
func userIDCacheKey(userID int64) string { return "user-id:" + strconv.FormatInt(userID, 10) }

// loadUsers looks usernames up in the cache, then in mongo for the misses,
// refilling the cache. Unknown usernames are absent from the result. The
// user-mention service shares this path: as in DeathStarBench it reads the
// user service's memcached and mongo directly.
func loadUsers(ctx context.Context, cache store.Cache, users store.Collection, usernames []string) (map[string]userRecord, error) {
	keys := make([]string, len(usernames))
	for i, name := range usernames {
		keys[i] = userCacheKey(name)
	}
	cached, err := cache.GetMulti(ctx, keys)
	if err != nil {
		cached = map[string][]byte{}
	}
	found := make(map[string]userRecord, len(usernames))
	for i, name := range usernames {
		var record userRecord
		if value, ok := cached[keys[i]]; ok && json.Unmarshal(value, &record) == nil {
			found[name] = record
			continue
		}
		err := users.Get(ctx, name, &record)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, internalError("read user", err)
		}
		found[name] = record
		if value, err := json.Marshal(record); err == nil {
			_ = cache.Set(ctx, keys[i], value, cacheTTL)
		}
	}
	return found, nil
}

// UserService implements sn.UserService.
type UserService struct {
	Users       store.Collection
	Cache       store.Cache
	SocialGraph sn.SocialGraphService
	IDs         *uniqueid.Generator
	Secret      []byte
	TokenTTL    time.Duration
}

// RegisterUser implements sn.UserService with a generated user ID.
func (s *UserService) RegisterUser(ctx context.Context, reqID int64, firstName, lastName, username, password string) error {
	return s.RegisterUserWithId(ctx, reqID, firstName, lastName, username, password, s.IDs.Next())
}

// RegisterUserWithId implements sn.UserService.
func (s *UserService) RegisterUserWithId(ctx context.Context, reqID int64, firstName, lastName, username, secret string, userID int64) error {
	if username == "" || secret == "" {
		return badRequest("username and password must not be empty")
	}
	record := userRecord{
		Username:  username,
		UserID:    userID,
		FirstName: firstName,
		LastName:  lastName,
		Salt:      password.NewSalt(),
	}
	record.PasswordHash = password.Hash(secret, record.Salt)
	err := s.Users.Insert(ctx, record)
	if errors.Is(err, store.ErrDuplicate) {
		// The wording is DeathStarBench's; the loader relies on it to skip.
		return serviceError(sn.ErrorKind_CONFLICT, "User %s already existed", username)
	}
	if err != nil {
		return internalError("store user", err)
	}
	if err := s.SocialGraph.InsertUser(ctx, reqID, userID); err != nil {
		return internalError("social-graph InsertUser", err)
	}
	return nil
}

// Login implements sn.UserService.
func (s *UserService) Login(ctx context.Context, _ int64, username, secret string) (string, error) {
	users, err := loadUsers(ctx, s.Cache, s.Users, []string{username})
	if err != nil {
		return "", err
	}
	record, ok := users[username]
	if !ok {
		return "", notFound("User: %s doesn't exist", username)
	}
	if !password.Matches(secret, record.Salt, record.PasswordHash) {
		return "", serviceError(sn.ErrorKind_UNAUTHORIZED, "Incorrect username or password")
	}
	now := time.Now()
	return SignToken(TokenClaims{
		UserID:    strconv.FormatInt(record.UserID, 10),
		Username:  username,
		IssuedAt:  now.Unix(),
		ExpiresAt: now.Add(s.TokenTTL).Unix(),
	}, s.Secret)
}

// CreatorWithUserId implements sn.UserService. Like DeathStarBench it trusts
// the pair the front end passed instead of paying for a lookup per post.
func (s *UserService) CreatorWithUserId(_ context.Context, _ int64, userID int64, username string) (*sn.Creator, error) {
	return &sn.Creator{UserID: userID, Username: username}, nil
}

// GetUserId implements sn.UserService.
func (s *UserService) GetUserId(ctx context.Context, _ int64, username string) (int64, error) {
	users, err := loadUsers(ctx, s.Cache, s.Users, []string{username})
	if err != nil {
		return 0, err
	}
	record, ok := users[username]
	if !ok {
		return 0, notFound("User: %s doesn't exist", username)
	}
	return record.UserID, nil
}

// GetUsername implements sn.UserService. Users are stored under their
// username, so this is a query on user_id, which FerretDB's SQLite backend
// answers by scanning the collection; hence the cache, and callers that ask
// only off the hot path. Unknown IDs are not cached, so a user registered a
// moment later is found at once.
func (s *UserService) GetUsername(ctx context.Context, _ int64, userID int64) (string, error) {
	key := userIDCacheKey(userID)
	if cached, err := s.Cache.GetMulti(ctx, []string{key}); err == nil {
		if name, ok := cached[key]; ok {
			return string(name), nil
		}
	}
	var records []userRecord
	if err := s.Users.FindEqual(ctx, "user_id", userID, &records); err != nil {
		return "", internalError("find user", err)
	}
	if len(records) == 0 {
		return "", notFound("User with user_id %d doesn't exist", userID)
	}
	_ = s.Cache.Set(ctx, key, []byte(records[0].Username), cacheTTL)
	return records[0].Username, nil
}
