package orchestrator

import (
	"net"
	"strconv"
)

func joinHostPort(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }

// ShortID is the first eight characters of an allocation or deployment ID,
// as `nomad alloc status` accepts and prints it.
func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
