//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/orchbench/orchbench/harness/testutil"
)

// The stores run as the pack runs them: Redis with an append-only file
// fsynced every second, FerretDB on SQLite in WAL mode with synchronous
// NORMAL. A SIGKILL is what a task restart after an OOM kill or a failed
// check does to them. What the writers were told had succeeded before the
// kill must be there after a restart on the same files; the test counts what
// is not.

// durabilityWriters write in parallel, each its own increasing sequence, so
// "acknowledged" is one number per writer.
const durabilityWriters = 8

// durabilityRounds kills each store this many times: one kill can land in
// a quiet moment of the fsync cycle by luck.
const durabilityRounds = 3

// storeProcess is a store that can be SIGKILLed and started again on its files.
type storeProcess struct {
	t    *testing.T
	name string
	path string
	args []string
	log  *os.File
	cmd  *exec.Cmd
}

func (p *storeProcess) start() {
	p.t.Helper()
	p.cmd = exec.Command(p.path, p.args...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		p.t.Fatalf("start %s: %v", p.name, err)
	}
}

func (p *storeProcess) kill() {
	p.cmd.Process.Kill()
	p.cmd.Wait()
}

func newStoreProcess(t *testing.T, logDir, name, path string, args ...string) *storeProcess {
	log, err := os.Create(filepath.Join(logDir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	p := &storeProcess{t: t, name: name, path: path, args: args, log: log}
	t.Cleanup(func() {
		if p.cmd != nil && p.cmd.ProcessState == nil {
			p.cmd.Process.Signal(os.Interrupt)
			done := make(chan struct{})
			go func() { p.cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				p.kill()
			}
		}
		log.Close()
		if t.Failed() {
			data, _ := os.ReadFile(log.Name())
			t.Logf("--- %s log (tail) ---\n%s", name, testutil.Tail(string(data), 2000))
		}
	})
	return p
}

// killRound has the writers write until the store is SIGKILLed mid-write,
// and returns each writer's last acknowledged sequence number (from 0; -1
// for none) and the acknowledged writes per second.
func killRound(t *testing.T, p *storeProcess, write func(ctx context.Context, writer, seq int) error, runFor time.Duration) ([]int, float64) {
	t.Helper()
	acked := make([]int, durabilityWriters)
	var total atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	began := time.Now()
	for w := range durabilityWriters {
		acked[w] = -1
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := 0; ; seq++ {
				if write(ctx, w, seq) != nil {
					return // the store is gone: nothing after this was acknowledged
				}
				acked[w] = seq
				total.Add(1)
			}
		}()
	}
	time.Sleep(runFor)
	p.kill()
	elapsed := time.Since(began)
	wg.Wait()
	return acked, float64(total.Load()) / elapsed.Seconds()
}

// missing counts acknowledged writes that read back absent.
func missing(t *testing.T, acked []int, present func(writer, seq int) bool) (lost, total int) {
	t.Helper()
	for w, last := range acked {
		for seq := 0; seq <= last; seq++ {
			total++
			if !present(w, seq) {
				lost++
			}
		}
	}
	return lost, total
}

func TestDurabilityRedisAppendOnlyEverySecond(t *testing.T) {
	redisServer := requireBinary(t, "redis-server")
	dataDir, logDir := t.TempDir(), t.TempDir()
	port := testutil.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	// the pack's flags (packs/social-network)
	p := newStoreProcess(t, logDir, "redis", redisServer, "--bind", "127.0.0.1", "--port", strconv.Itoa(port),
		"--save", "", "--appendonly", "yes", "--appendfsync", "everysec", "--maxmemory-policy", "noeviction", "--dir", dataDir)
	for round := range durabilityRounds {
		p.start()
		testutil.WaitTCP(t, "redis", addr, 30*time.Second)
		client := redis.NewClient(&redis.Options{Addr: addr, PoolSize: durabilityWriters, MaxRetries: -1})
		waitLoaded(t, client) // the files of the rounds before
		key := func(w, seq int) string { return fmt.Sprintf("r%d:w%d:%d", round, w, seq) }
		acked, rate := killRound(t, p, func(ctx context.Context, w, seq int) error {
			return client.Set(ctx, key(w, seq), seq, 0).Err()
		}, 3*time.Second)
		client.Close()

		p.start()
		testutil.WaitTCP(t, "redis", addr, 30*time.Second)
		client = redis.NewClient(&redis.Options{Addr: addr})
		waitLoaded(t, client)
		present := presentKeys(t, client, acked, key)
		lost, total := missing(t, acked, func(w, seq int) bool { return present[key(w, seq)] })
		client.Close()
		p.kill()
		t.Logf("redis round %d: %d acknowledged writes (%.0f/s), %d lost after SIGKILL and restart (%.2f s of writes)",
			round+1, total, rate, lost, float64(lost)/rate)
		if total == 0 {
			t.Fatal("no write was acknowledged")
		}
		// everysec fsyncs once a second, and Redis lets a write wait at most
		// two seconds for a slow fsync before acknowledging it unwritten
		if float64(lost) > 2*rate {
			t.Errorf("round %d: %d acknowledged writes lost, more than two seconds' worth (%.0f/s)", round+1, lost, rate)
		}
	}
}

// presentKeys asks Redis which of the acknowledged keys exist, a
// pipeline of a thousand EXISTS at a time: one round trip a key made the
// three rounds' 400,000 checks take most of this test's 40 s.
func presentKeys(t *testing.T, client *redis.Client, acked []int, key func(w, seq int) string) map[string]bool {
	t.Helper()
	present := map[string]bool{}
	var batch []string
	flush := func() {
		pipe := client.Pipeline()
		cmds := make([]*redis.IntCmd, len(batch))
		for i, k := range batch {
			cmds[i] = pipe.Exists(context.Background(), k)
		}
		if _, err := pipe.Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
		for i, cmd := range cmds {
			present[batch[i]] = cmd.Val() == 1
		}
		batch = batch[:0]
	}
	for w, last := range acked {
		for seq := 0; seq <= last; seq++ {
			if batch = append(batch, key(w, seq)); len(batch) == 1000 {
				flush()
			}
		}
	}
	if len(batch) > 0 {
		flush()
	}
	return present
}

// waitLoaded waits until Redis has read its append-only file: it answers
// LOADING before.
func waitLoaded(t *testing.T, client *redis.Client) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := client.Ping(context.Background()).Err()
		if err == nil {
			return
		}
		if time.Now().After(deadline) || !strings.HasPrefix(err.Error(), "LOADING") {
			t.Fatalf("redis after restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestDurabilityFerretDB(t *testing.T) {
	dataDir, logDir := t.TempDir(), t.TempDir()
	ferretdb := builds.Build(t, "deathstarbench/cmd/ferretdb")
	addr := testutil.FreeAddr(t)
	// the pack's flags and the binary's default SQLite parameters
	p := newStoreProcess(t, logDir, "ferretdb", ferretdb, "--listen-addr", addr, "--data-dir", dataDir)
	ctx := context.Background()
	connect := func() (*mongo.Client, *mongo.Collection) {
		client, err := mongo.Connect(ctx, options.Client().ApplyURI("mongodb://"+addr+"/").
			SetMaxPoolSize(durabilityWriters).SetRetryWrites(false).SetTimeout(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return client, client.Database("durability").Collection("durability")
	}
	for round := range durabilityRounds {
		p.start()
		testutil.WaitTCP(t, "ferretdb", addr, 30*time.Second)
		client, coll := connect()
		id := func(w, seq int) string { return fmt.Sprintf("r%d:w%d:%d", round, w, seq) }
		acked, rate := killRound(t, p, func(ctx context.Context, w, seq int) error {
			_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id(w, seq)}, {Key: "seq", Value: seq}})
			return err
		}, 3*time.Second)
		client.Disconnect(ctx)

		p.start()
		testutil.WaitTCP(t, "ferretdb", addr, 30*time.Second)
		client, coll = connect()
		stored := map[string]bool{}
		cur, err := coll.Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
		if err != nil {
			t.Fatal(err)
		}
		for cur.Next(ctx) {
			stored[cur.Current.Lookup("_id").StringValue()] = true
		}
		if err := cur.Err(); err != nil {
			t.Fatal(err)
		}
		client.Disconnect(ctx)
		p.kill()
		lost, total := missing(t, acked, func(w, seq int) bool { return stored[id(w, seq)] })
		t.Logf("ferretdb round %d: %d acknowledged writes (%.0f/s), %d lost after SIGKILL and restart",
			round+1, total, rate, lost)
		if total == 0 {
			t.Fatal("no write was acknowledged")
		}
		if lost > 0 {
			t.Errorf("round %d: %d acknowledged inserts lost: a committed SQLite transaction must survive a killed process", round+1, lost)
		}
	}
}
