package snapshot

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Store is a datastore a snapshot holds: FerretDB's and Redis's files, and
// memcached's items as a dump that sets them again (see memcached.go).
type Store string

const (
	StoreFerretDB  Store = "ferretdb"
	StoreRedis     Store = "redis"
	StoreMemcached Store = "memcached"
)

// Stores are the snapshot's stores, in the order they are archived.
var Stores = []Store{StoreFerretDB, StoreRedis, StoreMemcached}

// Manifest describes a cached snapshot.
type Manifest struct {
	Key     string    `json:"key"`
	Params  Params    `json:"params"`
	Format  int       `json:"format"`
	Created time.Time `json:"created"`
	// LoadSeconds is the API load; MakeSeconds all of making the snapshot.
	LoadSeconds float64 `json:"load_seconds"`
	MakeSeconds float64 `json:"make_seconds"`
	// Loaded counts what the loader stored.
	Loaded LoadCounts `json:"loaded"`
	// Images are the IDs of the images whose binaries wrote the files.
	Images map[Store]string `json:"images"`
	// Archives describe each store's archive.
	Archives map[Store]ArchiveInfo `json:"archives"`
}

// LoadCounts are the loader's successful requests per phase.
type LoadCounts struct {
	Users   int64 `json:"users"`
	Follows int64 `json:"follows"`
	Posts   int64 `json:"posts"`
}

// ArchiveInfo sizes one store's archive.
type ArchiveInfo struct {
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
}

// Cache holds snapshots as <Dir>/<key>/{manifest.json,<store>.tar.gz}.
type Cache struct {
	Dir string
}

// DefaultCache is under the cache every orchbench tool uses
// (cluster/tools.sh): $ORCHBENCH_CACHE, else ~/.cache/orchbench.
func DefaultCache() (Cache, error) {
	root := os.Getenv("ORCHBENCH_CACHE")
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return Cache{}, fmt.Errorf("no cache dir: set ORCHBENCH_CACHE: %w", err)
		}
		root = filepath.Join(home, ".cache", "orchbench")
	}
	return Cache{Dir: filepath.Join(root, "snapshots")}, nil
}

func (c Cache) entry(p Params) string { return filepath.Join(c.Dir, p.Key()) }

func (c Cache) archive(p Params, s Store) string {
	return filepath.Join(c.entry(p), string(s)+".tar.gz")
}

// Lookup returns the snapshot's manifest, or nil when the cache has none
// or only part of one.
func (c Cache) Lookup(p Params) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(c.entry(p), "manifest.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(c.entry(p), "manifest.json"), err)
	}
	for _, s := range Stores {
		_, err := os.Stat(c.archive(p, s))
		if errors.Is(err, fs.ErrNotExist) {
			// made before the store was snapshotted: made again
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return &m, nil
}

// Store archives each store's data dir and makes the entry appear whole
// (a rename), replacing an older one: a crash leaves either the old entry
// or the new one, never half of one.
func (c Cache) Store(m *Manifest, dataDirs map[Store]string) error {
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(c.Dir, ".new-"+m.Key+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	m.Archives = map[Store]ArchiveInfo{}
	for _, s := range Stores {
		info, err := writeArchive(filepath.Join(tmp, string(s)+".tar.gz"), dataDirs[s])
		if err != nil {
			return fmt.Errorf("archive %s: %w", s, err)
		}
		m.Archives[s] = info
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "manifest.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	final := c.entry(m.Params)
	old := final + ".old-" + strconv.Itoa(os.Getpid())
	if err := os.Rename(final, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		return err
	}
	return os.RemoveAll(old)
}

// skipFile leaves out what must not be restored: SQLite's shared-memory
// index (rebuilt from the WAL on open; a stale one would mislead it) and a
// seeding marker.
func skipFile(name string) bool {
	return strings.HasSuffix(name, "-shm") || strings.HasPrefix(name, ".orchbench-seeding")
}

func writeArchive(path, dir string) (info ArchiveInfo, err error) {
	f, err := os.Create(path)
	if err != nil {
		return info, err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir || skipFile(d.Name()) {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.IsDir():
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: rel + "/", Mode: 0o755, ModTime: fi.ModTime()})
		case fi.Mode().IsRegular():
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: rel, Mode: 0o644, Size: fi.Size(), ModTime: fi.ModTime()}); err != nil {
				return err
			}
			src, err := os.Open(p)
			if err != nil {
				return err
			}
			defer src.Close()
			n, err := io.Copy(tw, src)
			info.Files++
			info.Bytes += n
			return err
		default:
			return fmt.Errorf("%s: neither a file nor a directory", p)
		}
	})
	if err != nil {
		return info, err
	}
	if err := tw.Close(); err != nil {
		return info, err
	}
	return info, gz.Close()
}

// copyArchive writes a store's archived files into tw under prefix, as a
// build context needs them. They keep the archive's modes, readable by any
// user: Redis runs as nobody and copies them.
func (c Cache) copyArchive(p Params, s Store, tw *tar.Writer, prefix string) error {
	f, err := os.Open(c.archive(p, s))
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", c.archive(p, s), err)
		}
		h.Name = prefix + "/" + h.Name
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return err
		}
	}
}
