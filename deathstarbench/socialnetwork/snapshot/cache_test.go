package snapshot

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// archived lists what a store's archive puts into a build context.
func archived(t *testing.T, c Cache, p Params, s Store) map[string]string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := c.copyArchive(p, s, tw, "seed"); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	out := map[string]string{}
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		if h.Typeflag == tar.TypeReg && h.Mode&0o004 == 0 {
			t.Errorf("%s is not readable by Redis's user: mode %o", h.Name, h.Mode)
		}
		out[h.Name] = string(b)
	}
}

func TestCacheStoresLooksUpAndReplacesWhole(t *testing.T) {
	c := Cache{Dir: t.TempDir()}
	p := Params{Users: 60, PostsPerUser: 2, Seed: 1}
	if m, err := c.Lookup(p); m != nil || err != nil {
		t.Fatalf("an empty cache: %v, %v", m, err)
	}
	data := t.TempDir()
	writeTree(t, data, map[string]string{
		"ferretdb/post.sqlite": "posts", "ferretdb/post.sqlite-wal": "wal", "ferretdb/post.sqlite-shm": "stale index",
		"redis/appendonlydir/appendonly.aof.1.base.rdb": "rdb", "redis/appendonlydir/appendonly.aof.manifest": "manifest",
		"memcached/warm.memcached": "set k 0 0 1 noreply\r\nv\r\n",
	})
	dirs := map[Store]string{StoreFerretDB: filepath.Join(data, "ferretdb"), StoreRedis: filepath.Join(data, "redis"), StoreMemcached: filepath.Join(data, "memcached")}
	m := &Manifest{Key: p.Key(), Params: p, Format: FormatVersion}
	if err := c.Store(m, dirs); err != nil {
		t.Fatal(err)
	}
	got, err := c.Lookup(p)
	if err != nil || got == nil || got.Key != p.Key() || got.Archives[StoreFerretDB].Files != 2 || got.Archives[StoreRedis].Files != 2 || got.Archives[StoreMemcached].Files != 1 {
		t.Fatalf("lookup: %+v, %v", got, err)
	}
	if other, _ := c.Lookup(Params{Users: 61, PostsPerUser: 2, Seed: 1}); other != nil {
		t.Errorf("another dataset's lookup found %s", other.Key)
	}
	ferret := archived(t, c, p, StoreFerretDB)
	if ferret["seed/post.sqlite"] != "posts" || ferret["seed/post.sqlite-wal"] != "wal" {
		t.Errorf("ferretdb archive: %v", ferret)
	}
	if _, ok := ferret["seed/post.sqlite-shm"]; ok {
		t.Error("SQLite's shared-memory index was archived")
	}
	if redis := archived(t, c, p, StoreRedis); redis["seed/appendonlydir/appendonly.aof.manifest"] != "manifest" {
		t.Errorf("redis archive: %v", redis)
	}

	// made again: the new files replace the old, and nothing is left beside
	writeTree(t, data, map[string]string{"ferretdb/post.sqlite": "posts, made again"})
	if err := c.Store(&Manifest{Key: p.Key(), Params: p, Format: FormatVersion}, dirs); err != nil {
		t.Fatal(err)
	}
	if got := archived(t, c, p, StoreFerretDB)["seed/post.sqlite"]; got != "posts, made again" {
		t.Errorf("after a remake: %q", got)
	}
	entries, _ := os.ReadDir(c.Dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if strings.Join(names, " ") != p.Key() {
		t.Errorf("the cache holds %v, want only %s", names, p.Key())
	}

	// an entry missing an archive is no snapshot: it is made again
	os.Remove(c.archive(p, StoreMemcached))
	if m, err := c.Lookup(p); m != nil || err != nil {
		t.Errorf("an incomplete entry: %v, %v", m, err)
	}
}
