package remote

import (
	"os"
	"sort"
	"strings"
)

// hostFile is a file remote up keeps on a host.
type hostFile struct {
	data []byte
	mode os.FileMode
}

// syncFiles writes each file whose sum on the host differs from its
// content's and reports whether any did; active says whether unit runs.
func syncFiles(c *Conn, unit string, files map[string]hostFile) (changed, active bool, err error) {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	have, active, err := remoteSums(c, unit, paths)
	if err != nil {
		return false, false, err
	}
	for _, p := range paths {
		f := files[p]
		if have[p] == sum(f.data) {
			continue
		}
		if err := c.Write(p, f.data, f.mode); err != nil {
			return changed, active, err
		}
		changed = true
	}
	return changed, active, nil
}

// secretMode is 0600 for keys, 0644 for the rest, 0755 for programs.
func secretMode(path string) os.FileMode {
	switch {
	case strings.HasSuffix(path, "key.pem"), strings.HasSuffix(path, ".key"), strings.HasSuffix(path, ".token"):
		return 0o600
	case strings.Contains(path, "/bin/"):
		return 0o755
	}
	return 0o644
}

// asHostFiles gives every file its mode by its path.
func asHostFiles(m map[string][]byte) map[string]hostFile {
	out := make(map[string]hostFile, len(m))
	for p, b := range m {
		out[p] = hostFile{data: b, mode: secretMode(p)}
	}
	return out
}
