// Package socialnetwork implements the services of DeathStarBench's social
// network in Go: each type here is the handler of one Thrift service from
// thrift/social_network.thrift, and Frontend is the HTTP entry point that
// nginx/OpenResty plays in the original.
package socialnetwork

import (
	"errors"
	"fmt"

	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
)

func serviceError(kind sn.ErrorKind, format string, args ...any) error {
	return &sn.ServiceError{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) error {
	return serviceError(sn.ErrorKind_BAD_REQUEST, format, args...)
}

func notFound(format string, args ...any) error {
	return serviceError(sn.ErrorKind_NOT_FOUND, format, args...)
}

// internalError wraps a storage or upstream failure so the caller sees its
// cause; it crosses Thrift as a ServiceError, not as a broken connection.
func internalError(what string, err error) error {
	var se *sn.ServiceError
	if errors.As(err, &se) {
		return se
	}
	return serviceError(sn.ErrorKind_INTERNAL, "%s: %v", what, err)
}

// errorMessage is the text the front end shows for err: the service's own
// message when it gave one, the transport error otherwise.
func errorMessage(err error) string {
	var se *sn.ServiceError
	if errors.As(err, &se) {
		return se.Message
	}
	return err.Error()
}
