// Package mediamicroservices implements the services of DeathStarBench's
// media microservices in Go: each type here is the handler of one Thrift
// service from thrift/media_microservices.thrift, and Frontend is the HTTP
// entry point that nginx/OpenResty plays in the original.
package mediamicroservices

import (
	"errors"
	"fmt"

	mm "github.com/orchbench/orchbench/deathstarbench/mediamicroservices/thrift/gen-go/mediamicro"
)

func serviceError(kind mm.ErrorKind, format string, args ...any) error {
	return &mm.ServiceError{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) error {
	return serviceError(mm.ErrorKind_BAD_REQUEST, format, args...)
}

func notFound(format string, args ...any) error {
	return serviceError(mm.ErrorKind_NOT_FOUND, format, args...)
}

// internalError wraps a storage or upstream failure so the caller sees its
// cause; it crosses Thrift as a ServiceError, not as a broken connection.
func internalError(what string, err error) error {
	var se *mm.ServiceError
	if errors.As(err, &se) {
		return se
	}
	return serviceError(mm.ErrorKind_INTERNAL, "%s: %v", what, err)
}

// errorKind is err's kind: INTERNAL unless a service said otherwise.
func errorKind(err error) mm.ErrorKind {
	var se *mm.ServiceError
	if errors.As(err, &se) {
		return se.Kind
	}
	return mm.ErrorKind_INTERNAL
}

// errorMessage is the text the front end shows for err: the service's own
// message when it gave one, the transport error otherwise.
func errorMessage(err error) string {
	var se *mm.ServiceError
	if errors.As(err, &se) {
		return se.Message
	}
	return err.Error()
}
