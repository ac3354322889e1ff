package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

func TestBusyWaitGrowsToAMillisecondAndGivesUpAfterTenSeconds(t *testing.T) {
	for count, want := range map[int32]time.Duration{0: 50 * time.Microsecond, 1: 100 * time.Microsecond, 4: 800 * time.Microsecond, 5: time.Millisecond, 500: time.Millisecond} {
		if got, again := busyWait(count); got != want || !again {
			t.Errorf("busyWait(%d) = %v, %v; want %v, true", count, got, again, want)
		}
	}
	var waited time.Duration
	for count := int32(0); ; count++ {
		wait, again := busyWait(count)
		if !again {
			break
		}
		waited += wait
		if waited > 2*busyGiveUp {
			t.Fatalf("still waiting after %v", waited)
		}
	}
	if waited < busyGiveUp-busyMaxWait || waited > busyGiveUp+busyMaxWait {
		t.Fatalf("gave up after %v of waits, want about %v", waited, busyGiveUp)
	}
}

// A writer that finds the database locked is answered by our handler, in
// many short waits, not by SQLite's default one (whose waits would not be
// counted), and gets the lock once the other writer commits.
func TestAWriterFindingTheLockTakenWaitsInShortSteps(t *testing.T) {
	registerBusyHandler()
	file := filepath.Join(t.TempDir(), "busy.sqlite")
	db, err := sql.Open("sqlite", "file:"+file+"?"+defaultSQLiteParams+"&_pragma=journal_mode(wal)&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (v INTEGER)"); err != nil {
		t.Fatal(err)
	}
	holder, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.ExecContext(ctx, "INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	before := busyWaits.Load()
	const hold = 50 * time.Millisecond
	done := make(chan error, 1)
	go func() {
		tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: busy while holder writes
		if err == nil {
			_, err = tx.ExecContext(ctx, "INSERT INTO t VALUES (2)")
		}
		if err == nil {
			err = tx.Commit()
		}
		done <- err
	}()
	time.Sleep(hold)
	if err := holder.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the waiting writer: %v", err)
	}
	// at most busyMaxWait apart, and a loaded machine's sleeps overshoot
	if waits := busyWaits.Load() - before; waits < 5 {
		t.Fatalf("the waiting writer was answered %d times by our handler over %v, want many short waits", waits, hold)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("rows: %d, %v", n, err)
	}
}
