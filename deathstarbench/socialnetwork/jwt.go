package socialnetwork

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// TokenClaims are what a login token asserts, as in DeathStarBench's user
// service (user ID, username, issue time and lifetime).
type TokenClaims struct {
	UserID    string `json:"user_id"`
	Username  string `json:"username"`
	IssuedAt  int64  `json:"iat"`
	ExpiresAt int64  `json:"exp"`
}

// ErrTokenExpired is VerifyToken's error for a good token past its expiry,
// which the front end answers differently from a bad one.
var ErrTokenExpired = errors.New("token expired")

var jwtHeader = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

// SignToken returns a compact JWT (RFC 7519) signed with HMAC-SHA256.
func SignToken(claims TokenClaims, secret []byte) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	signingInput := jwtHeader + "." + base64.RawURLEncoding.EncodeToString(payload)
	return signingInput + "." + jwtSignature(signingInput, secret), nil
}

// VerifyToken checks the signature and expiry of token and returns its claims.
func VerifyToken(token string, secret []byte, now time.Time) (TokenClaims, error) {
	var claims TokenClaims
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return claims, errors.New("token is not three dot-separated parts")
	}
	header, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return claims, errors.New("token header is not base64url")
	}
	var alg struct {
		Alg string `json:"alg"`
	}
	// Pinning the algorithm stops "alg":"none" and key-confusion tricks.
	if err := json.Unmarshal(header, &alg); err != nil || alg.Alg != "HS256" {
		return claims, errors.New("token algorithm is not HS256")
	}
	want := jwtSignature(parts[0]+"."+parts[1], secret)
	if !hmac.Equal([]byte(want), []byte(parts[2])) {
		return claims, errors.New("token signature does not match")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return claims, errors.New("token payload is not base64url")
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return claims, errors.New("token payload is not JSON claims")
	}
	if claims.ExpiresAt != 0 && now.Unix() >= claims.ExpiresAt {
		return claims, ErrTokenExpired
	}
	return claims, nil
}

func jwtSignature(signingInput string, secret []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(signingInput))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}
