package mediamicroservices

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"time"
)

// cacheTTL bounds how long a looked-up record stays in memcached; the
// records never change under the benchmark, so this only frees memory.
const cacheTTL = 10 * time.Minute

// maxMemcachedKey is memcached's limit on a key's length.
const maxMemcachedKey = 250

// memcachedKey makes a memcached key of prefix and name. The original keys
// movie IDs by title, spaces and all, which memcached's text protocol
// refuses (a space ends the key); the title is query-escaped instead, and a
// key still too long is replaced by its SHA-256.
func memcachedKey(prefix, name string) string {
	key := prefix + url.QueryEscape(name)
	if len(key) <= maxMemcachedKey {
		return key
	}
	sum := sha256.Sum256([]byte(name))
	return prefix + "sha256:" + hex.EncodeToString(sum[:])
}
