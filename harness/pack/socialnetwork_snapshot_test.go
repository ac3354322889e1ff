package pack

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/orchbench/orchbench/deathstarbench/socialnetwork/snapshot"
)

// storeConfig is what the datastore tasks are started with, as written.
type storeConfig struct {
	image, args string
	hasDisk     bool
	seedMarker  string
}

// literalEnv reads the env block's literal strings and skips the rest.
func literalEnv(t *testing.T, body *hclsyntax.Body) map[string]string {
	out := map[string]string{}
	for name, attr := range body.Attributes {
		if v, diags := attr.Expr.Value(nil); !diags.HasErrors() && v.Type() == cty.String {
			out[name] = v.AsString()
		}
	}
	return out
}

// renderStores renders the social network and returns its meta and the
// config of the datastore tasks.
func renderStores(t *testing.T, vars map[string]string) (map[string]string, map[string]storeConfig) {
	t.Helper()
	vars["mhz_per_core"] = "2000"
	job, text, err := renderedJob(t, "social-network", vars)
	if err != nil {
		t.Fatalf("render %v: %v", vars, err)
	}
	stores := map[string]storeConfig{}
	for _, group := range job.Body.Blocks {
		if group.Type != "group" || !strings.Contains(" ferretdb redis memcached ", " "+group.Labels[0]+" ") {
			continue
		}
		task := only(t, group.Body, "task").Body
		config := only(t, task, "config").Body
		image, _ := config.Attributes["image"].Expr.Value(nil)
		sc := storeConfig{image: image.AsString()}
		rng := config.Attributes["args"].Expr.Range()
		sc.args = strings.Join(strings.Fields(text[rng.Start.Byte:rng.End.Byte]), " ")
		for _, b := range group.Body.Blocks {
			sc.hasDisk = sc.hasDisk || b.Type == "ephemeral_disk"
		}
		env := literalEnv(t, only(t, task, "env").Body)
		sc.seedMarker = env["MEMCACHED_SEED_MARKER"]
		stores[group.Labels[0]] = sc
	}
	return literalStrings(t, only(t, job.Body, "meta").Body), stores
}

func hookArgs(t *testing.T, meta map[string]string, key string) string {
	t.Helper()
	if meta[key] == "" {
		return ""
	}
	var args []string
	if err := json.Unmarshal([]byte(meta[key]), &args); err != nil {
		t.Fatalf("%s %q: %v", key, meta[key], err)
	}
	return strings.Join(args, " ")
}

// By default the stores start from the snapshot images the prepare hook
// makes: the names the pack writes must be the ones restore builds, or
// Nomad would find no image (or an older snapshot's).
func TestSocialNetworkStartsFromTheSnapshotItPrepares(t *testing.T) {
	for _, c := range []struct {
		vars   map[string]string
		tag    string
		params snapshot.Params
	}{
		{map[string]string{}, "local", snapshot.DefaultParams()},
		{map[string]string{"image_tag": "snap", "dataset_users": "60", "dataset_posts_per_user": "3", "dataset_seed": "7"}, "snap", snapshot.Params{Users: 60, PostsPerUser: 3, Seed: 7}},
	} {
		meta, stores := renderStores(t, c.vars)
		p := c.params
		prepare := hookArgs(t, meta, "orchbench_prepare_args")
		want := "dsb social-network restore --image-tag " + c.tag + " --users " + strconv.Itoa(p.Users) + " --posts-per-user " + strconv.Itoa(p.PostsPerUser) + " --seed " + strconv.FormatUint(p.Seed, 10)
		if prepare != want {
			t.Errorf("%v: prepare %q, want %q", c.vars, prepare, want)
		}
		if setup := hookArgs(t, meta, "orchbench_setup_args"); setup != "" {
			t.Errorf("%v: a snapshot deployment still loads through the API: %q", c.vars, setup)
		}
		if verify := hookArgs(t, meta, "orchbench_verify_args"); !strings.HasSuffix(verify, "--users "+strconv.Itoa(p.Users)+" --dataset-seed "+strconv.FormatUint(p.Seed, 10)) {
			t.Errorf("%v: verification %q checks another dataset than the snapshot's", c.vars, verify)
		}
		for _, s := range snapshot.Stores {
			if got, want := stores[string(s)].image, snapshot.ImageRef(s, c.tag, p); got != want {
				t.Errorf("%v: %s runs %q, restore builds %q", c.vars, s, got, want)
			}
		}
		// a restarted memcached starts empty, as any does: the marker in the
		// alloc dir, which a restart keeps, says it was warmed once
		if m := stores["memcached"].seedMarker; !strings.HasPrefix(m, "/alloc/data/") {
			t.Errorf("%v: memcached's seed marker %q is not in the alloc dir", c.vars, m)
		}
	}
}

// Without a snapshot, or with an external MongoDB (which no image can
// seed), the dataset is loaded through the API after a fresh deployment.
func TestSocialNetworkLoadsThroughTheAPIWithoutASnapshot(t *testing.T) {
	for _, vars := range []map[string]string{
		{"dataset_snapshot": "false"},
		{"mongodb_uri": "mongodb://10.0.0.5:27017/"},
	} {
		meta, stores := renderStores(t, vars)
		if got := hookArgs(t, meta, "orchbench_setup_args"); got != "dsb social-network load --allow-remote --frontend http://{{endpoint}} --users 962 --posts-per-user 10 --seed 1" {
			t.Errorf("%v: setup %q", vars, got)
		}
		if meta["orchbench_setup_timeout"] != "45m" || meta["orchbench_prepare_args"] != "" {
			t.Errorf("%v: setup timeout %q, prepare %q", vars, meta["orchbench_setup_timeout"], meta["orchbench_prepare_args"])
		}
		if got := stores["redis"].image; got != "orchbench/redis:local" {
			t.Errorf("%v: redis runs %q", vars, got)
		}
		if got := stores["memcached"]; got.image != "orchbench/memcached:local" || got.seedMarker != "" {
			t.Errorf("%v: memcached runs %q with seed marker %q", vars, got.image, got.seedMarker)
		}
	}
}

// Redis must keep the timelines through a restart and never evict them:
// the flags, and a data dir in the allocation that a restart keeps.
func TestSocialNetworkRedisIsDurableAndDoesNotEvict(t *testing.T) {
	for _, vars := range []map[string]string{{}, {"dataset_snapshot": "false"}} {
		_, stores := renderStores(t, vars)
		redis := stores["redis"]
		for _, flag := range []string{`"--dir", "/alloc/data/redis"`, `"--appendonly", "yes"`, `"--appendfsync", "everysec"`, `"--maxmemory-policy", "noeviction"`} {
			if !strings.Contains(redis.args, flag) {
				t.Errorf("%v: redis args %s lack %s", vars, redis.args, flag)
			}
		}
		if !redis.hasDisk || !stores["ferretdb"].hasDisk {
			t.Errorf("%v: redis and ferretdb keep their files in the alloc dir and declare its size (redis %v, ferretdb %v)", vars, redis.hasDisk, stores["ferretdb"].hasDisk)
		}
	}
}
