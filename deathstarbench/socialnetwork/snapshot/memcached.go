package snapshot

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// A loaded deployment's memcached holds every post, user and short URL the
// loader wrote through the services (for their cache TTL). A snapshot
// deployment whose memcached started empty would read every post from
// FerretDB through a post-storage capped at a few hundredths of a core:
// the first verification took a minute and hit the services' 10 s RPC
// timeout, and the first measurements would be of a cold cache the loader
// never left. So the snapshot keeps memcached's items too, as the text
// protocol commands that set them again, which orchbench/memcached's
// entrypoint sends to a new memcached once (cluster/images/memcached).

// memcachedDumpFile is the dump's name in the store's seed dir; the
// entrypoint sends every *.memcached file there.
const memcachedDumpFile = "warm.memcached"

// getBatch is how many keys one get asks for.
const getBatch = 100

// memcachedItem is one line of lru_crawler metadump.
type memcachedItem struct {
	key string
	// exp is the absolute expiry (unix seconds), -1 for none.
	exp int64
}

// dumpMemcached writes every item of the memcached at addr into dir as
// "set <key> <flags> <ttl> <bytes> noreply" commands, each TTL what was
// left of it at the dump, and returns the count of items written.
func dumpMemcached(ctx context.Context, addr, dir string) (int, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		conn.SetDeadline(deadline)
	}
	r := bufio.NewReader(conn)
	items, err := allItems(conn, r)
	if err != nil {
		return 0, err
	}
	f, err := os.Create(dir + "/" + memcachedDumpFile)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriter(f)
	now := time.Now().Unix()
	ttl := map[string]int64{}
	written := 0
	for start := 0; start < len(items); start += getBatch {
		batch := items[start:min(start+getBatch, len(items))]
		keys := make([]string, len(batch))
		for i, it := range batch {
			keys[i] = it.key
			ttl[it.key] = 0
			if it.exp > 0 {
				// an item expiring in this second is kept a second rather than forever
				ttl[it.key] = max(it.exp-now, 1)
			}
		}
		if _, err := fmt.Fprintf(conn, "get %s\r\n", strings.Join(keys, " ")); err != nil {
			f.Close()
			return 0, err
		}
		n, err := copyValues(r, w, ttl)
		if err != nil {
			f.Close()
			return 0, err
		}
		written += n
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, err
	}
	return written, f.Close()
}

// metadumpPasses bounds the crawls allItems makes.
const metadumpPasses = 5

// allItems lists every item: the LRU crawler can miss an item that moves
// between LRU segments while it crawls, so crawls are repeated, their keys
// merged, until they account for memcached's item count.
func allItems(conn io.Writer, r *bufio.Reader) ([]memcachedItem, error) {
	seen := map[string]bool{}
	var items []memcachedItem
	for range metadumpPasses {
		pass, err := metadump(conn, r)
		if err != nil {
			return nil, err
		}
		for _, it := range pass {
			if !seen[it.key] {
				seen[it.key] = true
				items = append(items, it)
			}
		}
		count, err := itemCount(conn, r)
		if err != nil {
			return nil, err
		}
		if len(items) >= count {
			return items, nil
		}
	}
	return items, nil
}

// itemCount is memcached's curr_items.
func itemCount(conn io.Writer, r *bufio.Reader) (int, error) {
	if _, err := io.WriteString(conn, "stats\r\n"); err != nil {
		return 0, err
	}
	count := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return 0, fmt.Errorf("memcached stats: %w", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "END" {
			if count < 0 {
				return 0, fmt.Errorf("memcached stats: no curr_items")
			}
			return count, nil
		}
		if v, ok := strings.CutPrefix(line, "STAT curr_items "); ok {
			if count, err = strconv.Atoi(v); err != nil {
				return 0, fmt.Errorf("memcached stats: curr_items %q", v)
			}
		}
	}
}

// metadump lists every item's key and expiry.
func metadump(conn io.Writer, r *bufio.Reader) ([]memcachedItem, error) {
	if _, err := io.WriteString(conn, "lru_crawler metadump all\r\n"); err != nil {
		return nil, err
	}
	var items []memcachedItem
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("memcached metadump: %w", err)
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "END":
			return items, nil
		case strings.HasPrefix(line, "BUSY") || strings.HasPrefix(line, "ERROR") || strings.HasPrefix(line, "CLIENT_ERROR"):
			return nil, fmt.Errorf("memcached metadump: %s", line)
		}
		var it memcachedItem
		for _, field := range strings.Fields(line) {
			name, value, _ := strings.Cut(field, "=")
			switch name {
			case "key":
				// metadump escapes keys as URIs
				if it.key, err = url.PathUnescape(value); err != nil {
					return nil, fmt.Errorf("memcached metadump key %q: %w", value, err)
				}
			case "exp":
				if it.exp, err = strconv.ParseInt(value, 10, 64); err != nil {
					return nil, fmt.Errorf("memcached metadump exp %q: %w", value, err)
				}
			}
		}
		if it.key == "" {
			return nil, fmt.Errorf("memcached metadump: no key in %q", line)
		}
		items = append(items, it)
	}
}

// copyValues reads one get's answer and writes a set command per value;
// an item gone since the metadump is simply absent.
func copyValues(r *bufio.Reader, w io.Writer, ttl map[string]int64) (int, error) {
	n := 0
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return n, fmt.Errorf("memcached get: %w", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "END" {
			return n, nil
		}
		// VALUE <key> <flags> <bytes>
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "VALUE" {
			return n, fmt.Errorf("memcached get: unexpected %q", line)
		}
		size, err := strconv.Atoi(f[3])
		if err != nil {
			return n, fmt.Errorf("memcached get: size in %q", line)
		}
		if _, err := fmt.Fprintf(w, "set %s %s %d %d noreply\r\n", f[1], f[2], ttl[f[1]], size); err != nil {
			return n, err
		}
		// the value and its \r\n
		if _, err := io.CopyN(w, r, int64(size)+2); err != nil {
			return n, err
		}
		n++
	}
}
