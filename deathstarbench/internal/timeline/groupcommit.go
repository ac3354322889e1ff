package timeline

import (
	"context"
	"sync"
	"time"
)

// groupWriteTimeout bounds one write of a group commit; it is not the
// caller's deadline, since one write carries several callers' values.
const groupWriteTimeout = 30 * time.Second

// GroupCommit appends values to documents with at most one write per
// document in flight: values that arrive while a document is being written
// wait and go together in its next write. Each caller returns once a write
// holding its value has finished, so an append is as durable as a direct
// write.
//
// FerretDB applies an update by reading the document and writing it back
// outside a transaction, so two concurrent appends to one document can
// lose one of them; and DeathStarBench's loader composes a user's posts
// concurrently (and the media's compose-review workload reviews 1000 movies
// at hundreds a second), so many appends to one document arrive at once.
// Serialising per document removes the loss, folding removes most of the
// writes.
type GroupCommit struct {
	mu      sync.Mutex
	pending map[string]*commitBatch // collecting, not yet being written
	busy    map[string]bool         // a writer is draining the document
}

type commitBatch struct {
	values []any
	done   chan struct{}
	err    error
}

// WriteFunc writes values to document id in one write.
type WriteFunc func(ctx context.Context, id string, values []any) error

// Append adds value to document id through write and returns the error of
// the write that carried it, or ctx's if ctx ends first (the value may
// still be written then, as with any timed-out write).
func (g *GroupCommit) Append(ctx context.Context, id string, value any, write WriteFunc) error {
	g.mu.Lock()
	if g.pending == nil {
		g.pending, g.busy = map[string]*commitBatch{}, map[string]bool{}
	}
	batch := g.pending[id]
	if batch == nil {
		batch = &commitBatch{done: make(chan struct{})}
		g.pending[id] = batch
	}
	batch.values = append(batch.values, value)
	if !g.busy[id] {
		g.busy[id] = true
		go g.drain(context.WithoutCancel(ctx), id, write)
	}
	g.mu.Unlock()
	select {
	case <-batch.done:
		return batch.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// drain writes document id's batches one after another until none is left.
func (g *GroupCommit) drain(ctx context.Context, id string, write WriteFunc) {
	for {
		g.mu.Lock()
		batch := g.pending[id]
		if batch == nil {
			delete(g.busy, id)
			g.mu.Unlock()
			return
		}
		delete(g.pending, id)
		g.mu.Unlock()
		writeCtx, cancel := context.WithTimeout(ctx, groupWriteTimeout)
		batch.err = write(writeCtx, id, batch.values)
		cancel()
		close(batch.done)
	}
}
