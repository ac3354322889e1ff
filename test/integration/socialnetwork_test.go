//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/socialnetwork/dataset"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/orchestrator/nomad"
)

// A small dataset keeps the test short; the code path is the full one.
const (
	snUsers         = 60
	snResourceScale = "0.03"
)

var snVars = []string{"--var", "resource_scale=" + snResourceScale, "--var", "dataset_users=" + strconv.Itoa(snUsers)}

// The sweep reuses the deployment the test made (same pack, same vars), so
// it measures the loaded dataset and kills Redis three seconds into the load.
var snFaultSpec = `
sweep "sn-fault" {
  seed          = 5
  repetitions   = 1
  warmup        = "2s"
  duration      = "10s"
  orchestrators = ["nomad"]
  app "social-network" {
    variants     = ["baseline"]
    vars         = { resource_scale = ` + snResourceScale + `, dataset_users = ` + strconv.Itoa(snUsers) + ` }
    rates        = [10]
    threads      = 1
    connections  = 4
    distribution = "exp"
    workload     = "social-network:mixed@` + strconv.Itoa(snUsers) + `"
    fault {
      kind    = "kill-task"
      service = "social-network-baseline-redis"
      after   = "3s"
    }
  }
}
`

// TestSocialNetworkPack deploys the social network from its pack, loads a
// dataset through the HTTP API, checks that a composed post reaches every
// follower, kills Redis under load, and scales the services to two.
func TestSocialNetworkPack(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	ad, err := nomad.New("", "")
	if err != nil {
		t.Fatal(err)
	}
	const job = "social-network-baseline"

	start := time.Now()
	must(t, orchbench, append([]string{"pack", "run", "social-network", "--wait"}, snVars...)...)
	t.Logf("deploy time, baseline (15 tasks, healthy in Consul): %s", time.Since(start).Round(100*time.Millisecond))
	defer must(t, orchbench, append([]string{"pack", "destroy", "social-network"}, snVars...)...)

	dep := deploymentOf(t, ad, job)
	eps, err := ad.Endpoints(ctx, dep, job+"-frontend")
	if err != nil {
		t.Fatal(err)
	}
	frontend := "http://" + eps[0].HostPort()

	loadStart := time.Now()
	must(t, orchbench, "dsb", "social-network", "load", "--frontend", frontend, "--users", strconv.Itoa(snUsers), "--posts-per-user", "3")
	t.Logf("dataset load (%d users): %s", snUsers, time.Since(loadStart).Round(100*time.Millisecond))
	must(t, orchbench, "dsb", "social-network", "verify", "--frontend", frontend, "--users", strconv.Itoa(snUsers), "--samples", "10")

	t.Run("compose-reaches-followers", func(t *testing.T) { composeReachesFollowers(t, frontend) })
	t.Run("kill-redis-under-load", func(t *testing.T) { killRedisUnderLoad(t, ctx, ad, job) })
	t.Run("scale-2", func(t *testing.T) { scaleToTwo(t, ctx, ad, job) })
}

func deploymentOf(t *testing.T, ad *nomad.Orchestrator, job string) *orchestrator.Deployment {
	t.Helper()
	info, _, err := ad.Client.Jobs().Info(job, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &orchestrator.Deployment{Orchestrator: "nomad", Job: job, Version: *info.Version}
}

// composeReachesFollowers composes as the user with the most followers in
// the generated graph and reads the post back from every follower's home
// timeline and the author's user timeline.
func composeReachesFollowers(t *testing.T, frontend string) {
	graph, err := dataset.Generate(snUsers, dataset.EdgesFor(snUsers), dataset.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	// The loader follows both ways along each friendship.
	followers := map[int][]int{}
	for _, e := range graph.Edges {
		followers[e[0]] = append(followers[e[0]], e[1])
		followers[e[1]] = append(followers[e[1]], e[0])
	}
	author := 1
	for u, f := range followers {
		if len(f) > len(followers[author]) {
			author = u
		}
	}
	text := fmt.Sprintf("integration %d: hello to my %d followers", time.Now().UnixNano(), len(followers[author]))
	form := url.Values{"username": {dataset.Username(author)}, "user_id": {strconv.Itoa(author)},
		"text": {text}, "media_ids": {"[]"}, "media_types": {"[]"}, "post_type": {"0"}}
	resp, err := http.PostForm(frontend+"/wrk2-api/post/compose", form)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("compose: %s %s", resp.Status, body)
	}
	newest := func(kind string, user int) (map[string]any, error) {
		u := fmt.Sprintf("%s/wrk2-api/%s/read?user_id=%d&start=0&stop=1", frontend, kind, user)
		resp, err := http.Get(u)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var posts []map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&posts); err != nil || len(posts) == 0 {
			return nil, fmt.Errorf("GET %s: %s, %d posts, %v", u, resp.Status, len(posts), err)
		}
		return posts[0], nil
	}
	check := func(kind string, user int) {
		post, err := newest(kind, user)
		if err != nil {
			t.Errorf("%s of user %d: %v", kind, user, err)
			return
		}
		creator, _ := post["creator"].(map[string]any)
		if post["text"] != text || creator["user_id"] != strconv.Itoa(author) || creator["username"] != dataset.Username(author) {
			t.Errorf("%s of user %d: newest post is %v, not the one user %d just composed", kind, user, post, author)
		}
	}
	check("user-timeline", author)
	for _, f := range followers[author] {
		check("home-timeline", f)
	}
	t.Logf("post by user %d is the newest in its user timeline and in all %d followers' home timelines", author, len(followers[author]))
}

// killRedisUnderLoad runs a sweep step whose fault kills the Redis task:
// the sweep completes, the step records the errors, and Nomad restarts Redis.
func killRedisUnderLoad(t *testing.T, ctx context.Context, ad *nomad.Orchestrator, job string) {
	// --keep: the deployment is the test's, and Redis's restart is checked after.
	steps := sweepSteps(t, "sn-fault", snFaultSpec, "--keep")
	if len(steps) != 1 {
		t.Fatalf("want one step, got %d", len(steps))
	}
	s := steps[0]
	if s.Metadata["deployment"] != "reused running version" {
		t.Errorf("the sweep should have reused the loaded deployment, got %v", s.Metadata["deployment"])
	}
	f, _ := s.Metadata["fault"].(map[string]any)
	if f == nil || f["kind"] != "kill-task" || f["service"] != job+"-redis" {
		t.Fatalf("fault not recorded as a kill of Redis: %v", s.Metadata["fault"])
	}
	if s.Errors == 0 {
		t.Errorf("Redis was killed under load but the step recorded no errors (status codes %v)", s.StatusCodes)
	}
	t.Logf("step %s %v; %d errors of %d requests, status codes %v, error classes %v",
		s.Outcome, s.Reasons, s.Errors, s.Requests, s.StatusCodes, s.ErrorClasses)

	// Nomad restarts the task in place and Consul sees it healthy again.
	dep := deploymentOf(t, ad, job)
	if err := ad.WaitHealthy(ctx, dep, 2*time.Minute); err != nil {
		t.Fatalf("after the kill: %v", err)
	}
	allocs, _, err := ad.Client.Jobs().Allocations(job, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	restarted := false
	for _, a := range allocs {
		if st, ok := a.TaskStates["redis"]; ok && a.ClientStatus == "running" && st.Restarts > 0 {
			restarted = true
		}
	}
	if !restarted {
		t.Errorf("no running Redis allocation shows a restart")
	}
}

// scaleToTwo redeploys with --var scale=2 and expects two healthy instances
// of every socialnet service and one of each store.
func scaleToTwo(t *testing.T, ctx context.Context, ad *nomad.Orchestrator, job string) {
	vars := append([]string{"--var", "scale=2"}, snVars...)
	start := time.Now()
	must(t, orchbench, append([]string{"pack", "run", "social-network", "--wait"}, vars...)...)
	t.Logf("deploy time, baseline --var scale=2 (from one instance each to two, healthy in Consul): %s", time.Since(start).Round(100*time.Millisecond))
	dep := deploymentOf(t, ad, job)
	for _, svc := range []string{"frontend", "compose-post", "text", "url-shorten", "user-mention", "media",
		"unique-id", "user", "social-graph", "post-storage", "user-timeline", "home-timeline", "redis", "ferretdb", "memcached"} {
		eps, err := ad.Endpoints(ctx, dep, job+"-"+svc)
		if err != nil {
			t.Errorf("%s: %v", svc, err)
			continue
		}
		want := 2
		if svc == "redis" || svc == "ferretdb" || svc == "memcached" {
			want = 1
		}
		if len(eps) != want {
			t.Errorf("%s: %d healthy instances, want %d", svc, len(eps), want)
		}
	}
}
