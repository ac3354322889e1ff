// Package password stores passwords as DeathStarBench's user services do:
// SHA-256 of the password followed by a random salt, both hex-encoded.
package password

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
)

// Hash is the stored form of password with salt.
func Hash(password, salt string) string {
	sum := sha256.Sum256([]byte(password + salt))
	return hex.EncodeToString(sum[:])
}

// NewSalt returns a random salt.
func NewSalt() string {
	var salt [16]byte
	rand.Read(salt[:])
	return hex.EncodeToString(salt[:])
}

// Matches tells whether password with salt hashes to stored, in constant
// time.
func Matches(password, salt, stored string) bool {
	return subtle.ConstantTimeCompare([]byte(Hash(password, salt)), []byte(stored)) == 1
}
