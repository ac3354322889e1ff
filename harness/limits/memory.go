package limits

import (
	"fmt"
	"path/filepath"
)

// ResidentBytes is the anonymous (resident, not page-cache) memory of the
// cgroup at path, as Enforced.MemoryCgroupPath gives it. Page cache is left
// out on purpose: a log shipper reads many files, and their cached pages are
// the kernel's, reclaimable, not the process's footprint.
func ResidentBytes(path string) (int64, error) {
	if stat, err := readStat(filepath.Join(Root, path, "memory.stat")); err == nil {
		if anon, ok := stat["anon"]; ok { // v2
			return anon, nil
		}
	}
	file := filepath.Join(v1Dir("memory", path), "memory.stat")
	stat, err := readStat(file)
	if err != nil {
		return 0, err
	}
	rss, ok := stat["total_rss"]
	if !ok {
		return 0, fmt.Errorf("%s has no total_rss", file)
	}
	return rss, nil
}
