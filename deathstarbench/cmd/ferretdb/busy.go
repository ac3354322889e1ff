package main

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite lets one connection write a database at a time. FerretDB opens up
// to 100 connections per database, so under concurrent writes most BEGIN
// IMMEDIATEs find the lock taken and call the busy handler. SQLite's
// default handler (busy_timeout) sleeps 1, 2, 5, 10, 15, 20, 25 ms ... between
// tries, while a write here holds the lock for well under a millisecond:
// writers slept for tens of milliseconds with the lock free and the CPU
// idle, which made a compose-post take about 90 ms at 16 users. The handler
// below tries again after a short wait that grows to at most a millisecond,
// and gives up after busyGiveUp as busy_timeout(10000) would.

const (
	busyFirstWait = 50 * time.Microsecond
	busyMaxWait   = time.Millisecond
	busyGiveUp    = 10 * time.Second
)

// busyWaits counts the handler's calls; a test reads it to tell that the
// handler, not SQLite's default, answered a busy database.
var busyWaits atomic.Int64

// busyWait is how long the handler waits before the try that follows
// the count-th busy answer (count from 0), and whether it gives up instead.
func busyWait(count int32) (time.Duration, bool) {
	waited, wait := time.Duration(0), busyFirstWait
	for i := int32(0); i < count; i++ {
		if wait == busyMaxWait {
			waited += time.Duration(count-i) * busyMaxWait
			break
		}
		waited += wait
		wait = min(2*wait, busyMaxWait)
	}
	if waited >= busyGiveUp {
		return 0, false
	}
	return wait, true
}

// busyHandler is SQLite's xBusy callback, called on the goroutine running
// the statement: nonzero asks SQLite to try again.
func busyHandler(_ *libc.TLS, _ uintptr, count int32) int32 {
	busyWaits.Add(1)
	wait, again := busyWait(count)
	if !again {
		return 0
	}
	time.Sleep(wait)
	return 1
}

// busyHandlerPointer is busyHandler as the C function pointer the
// translated SQLite calls: a pointer to the Go func value, as modernc's own
// callbacks are passed (https://golang.org/s/go11func). It is a package
// variable so that the func value it points to is never collected.
var (
	busyHandlerFunc    = busyHandler
	busyHandlerPointer = *(*uintptr)(unsafe.Pointer(&busyHandlerFunc))
)

// installBusyHandler replaces the default busy handler of a connection the
// modernc driver has just opened (its connection hook's argument). The
// driver does not export the connection's handle, so it is read from the
// connection's fields by name; a driver whose fields differ is refused
// with an error rather than guessed at (go.mod pins modernc.org/sqlite).
func installBusyHandler(conn any) error {
	v := reflect.ValueOf(conn)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("sqlite connection %T: not a pointer to a struct", conn)
	}
	db, tls := v.Elem().FieldByName("db"), v.Elem().FieldByName("tls")
	if db.Kind() != reflect.Uintptr || tls.Kind() != reflect.Pointer || tls.Type().Elem() != reflect.TypeOf(libc.TLS{}) {
		return fmt.Errorf("sqlite connection %T: no db handle and TLS fields of the expected types (modernc.org/sqlite changed?)", conn)
	}
	handle := uintptr(db.Uint())
	if handle == 0 || tls.IsNil() {
		return fmt.Errorf("sqlite connection %T: not open", conn)
	}
	t := (*libc.TLS)(unsafe.Pointer(tls.Pointer()))
	if rc := sqlite3.Xsqlite3_busy_handler(t, handle, busyHandlerPointer, 0); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("sqlite3_busy_handler: result code %d", rc)
	}
	return nil
}

var registerBusyHandlerOnce sync.Once

// registerBusyHandler has every SQLite connection the process opens,
// FerretDB's and the indexer's, wait for a busy database in short steps.
func registerBusyHandler() {
	registerBusyHandlerOnce.Do(func() {
		sqlite.RegisterConnectionHook(func(conn sqlite.ExecQuerierContext, _ string) error {
			return installBusyHandler(conn)
		})
	})
}
