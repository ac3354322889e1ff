package orchestrator

import "strings"

// ShortID is the first eight characters of an allocation or deployment ID,
// as `nomad alloc status` accepts and prints it.
func ShortID(id string) string {
	// a name (a pod's: workload-suffix) only says which whole; a UUID's
	// first dash is after eight characters
	if i := strings.IndexByte(id, '-'); i >= 0 && i != 8 {
		return id
	}
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
