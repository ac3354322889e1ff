package snapshot

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"

	"github.com/orchbench/orchbench/deathstarbench/socialnetwork/dataset"
)

// MakeOptions configure Make.
type MakeOptions struct {
	Params Params
	// Tag is the tag of the four orchbench images whose binaries make it.
	Tag   string
	Cache Cache
	// Concurrency is the loader's requests in flight.
	Concurrency int
	Docker      *client.Client
	// Progress receives a line at least every progressEvery while work goes on.
	Progress func(line string)
}

// progressEvery bounds the silence of a long step.
const progressEvery = 10 * time.Second

// Make loads the dataset into a stack of the tag's images, lets the stores
// settle, stops them cleanly and stores their files in the cache.
func Make(ctx context.Context, opts MakeOptions) (m *Manifest, err error) {
	if err := opts.Params.Validate(); err != nil {
		return nil, err
	}
	say := opts.Progress
	if say == nil {
		say = func(string) {}
	}
	began := time.Now()
	key := opts.Params.Key()
	bases, err := checkBases(ctx, opts.Docker, opts.Tag)
	if err != nil {
		return nil, err
	}
	graph, err := dataset.Generate(opts.Params.Users, dataset.EdgesFor(opts.Params.Users), opts.Params.Seed)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Cache.Dir, 0o755); err != nil {
		return nil, err
	}
	say(fmt.Sprintf("snapshot %s: starting FerretDB, Redis, memcached and the services from orchbench/*:%s on loopback", key, opts.Tag))
	st, err := startStack(ctx, opts.Docker, baseImagesOf(opts.Tag), key, opts.Cache.Dir)
	if st != nil {
		defer func() {
			// removal must happen even when ctx was cancelled
			if rerr := st.remove(context.WithoutCancel(ctx)); rerr != nil && err == nil {
				err = rerr
			}
		}()
	}
	if err != nil {
		return nil, err
	}
	say(fmt.Sprintf("snapshot %s: loading %d users, %d friendships, %d posts per user on average through %s", key, graph.Users, len(graph.Edges), opts.Params.PostsPerUser, st.frontend))
	loadBegan := time.Now()
	result, err := dataset.Load(ctx, dataset.LoadOptions{
		Frontend: st.frontend, Graph: graph, PostsPerUser: opts.Params.PostsPerUser,
		Concurrency: opts.Concurrency, Seed: opts.Params.Seed, Progress: say,
	})
	if err == nil && result.Failed() > 0 {
		var firsts []string
		for _, p := range []dataset.PhaseResult{result.Register, result.Follow, result.Compose} {
			firsts = append(firsts, p.FirstErrors...)
		}
		err = fmt.Errorf("%d requests failed, e.g. %s", result.Failed(), strings.Join(firsts[:min(3, len(firsts))], "; "))
	}
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	loadSeconds := time.Since(loadBegan).Seconds()
	say(fmt.Sprintf("snapshot %s: loaded in %.0f s", key, loadSeconds))

	if err := settle(ctx, st.dataDirs[StoreFerretDB], say); err != nil {
		return nil, err
	}
	verified, err := dataset.Verify(ctx, dataset.VerifyOptions{Frontend: st.frontend, Users: opts.Params.Users, Samples: 20, Seed: 1, DatasetSeed: opts.Params.Seed})
	if err == nil && !verified.OK() {
		err = fmt.Errorf("%d problems, e.g. %s", len(verified.Problems), verified.Problems[0])
	}
	if err != nil {
		return nil, fmt.Errorf("verify before snapshotting: %w", err)
	}
	say(fmt.Sprintf("snapshot %s: verified %d timelines, %d posts; stopping the stores", key, verified.TimelinesRead, verified.PostsChecked))

	if err := st.stopClean(ctx, "socialnet", 10*time.Second); err != nil {
		return nil, err
	}
	items, err := dumpMemcached(ctx, st.memcachedAddr, st.dataDirs[StoreMemcached])
	if err != nil {
		return nil, fmt.Errorf("dump memcached: %w", err)
	}
	say(fmt.Sprintf("snapshot %s: memcached: %d items dumped", key, items))
	if err := compactRedis(ctx, st.redisAddr, say); err != nil {
		return nil, err
	}
	for _, name := range []string{"redis", "ferretdb"} {
		if err := st.stopClean(ctx, name, 60*time.Second); err != nil {
			return nil, err
		}
	}
	m = &Manifest{
		Key: key, Params: opts.Params, Format: FormatVersion, Created: time.Now().UTC(), LoadSeconds: loadSeconds,
		Loaded: LoadCounts{Users: result.Register.OK, Follows: result.Follow.OK, Posts: result.Compose.OK},
		Images: map[Store]string{},
	}
	for s, img := range bases {
		m.Images[s] = img.ID
	}
	m.MakeSeconds = time.Since(began).Seconds()
	if err := opts.Cache.Store(m, st.dataDirs); err != nil {
		return nil, fmt.Errorf("store the snapshot in %s: %w", opts.Cache.Dir, err)
	}
	for _, s := range Stores {
		a := m.Archives[s]
		say(fmt.Sprintf("snapshot %s: %s: %d files, %.1f MiB", key, s, a.Files, float64(a.Bytes)/(1<<20)))
	}
	return m, nil
}

// compactRedis rewrites the append-only file into its RDB base, so a
// restore reads one compact file instead of replaying every command of the
// load, and waits for the rewrite to finish.
func compactRedis(ctx context.Context, addr string, say func(string)) error {
	rc := redis.NewClient(&redis.Options{Addr: addr})
	defer rc.Close()
	if err := rc.BgRewriteAOF(ctx).Err(); err != nil {
		return fmt.Errorf("redis BGREWRITEAOF: %w", err)
	}
	began := time.Now()
	lastSaid := began
	for {
		info, err := rc.Info(ctx, "persistence").Result()
		if err != nil {
			return fmt.Errorf("redis INFO: %w", err)
		}
		fields := infoFields(info)
		if fields["aof_rewrite_in_progress"] == "0" && fields["aof_rewrite_scheduled"] == "0" {
			if s := fields["aof_last_bgrewrite_status"]; s != "ok" {
				return fmt.Errorf("redis append-only rewrite: status %q", s)
			}
			return nil
		}
		if time.Since(lastSaid) >= progressEvery {
			lastSaid = time.Now()
			say(fmt.Sprintf("redis: rewriting the append-only file for %s", time.Since(began).Round(time.Second)))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func infoFields(info string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			out[k] = v
		}
	}
	return out
}
