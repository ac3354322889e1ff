package limits

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
)

// The CPU weight and the swap limit do not cap a task the way a quota or a
// memory limit does, but they decide what it gets when the node is
// contended (the weight) and whether it slows down instead of being
// OOM-killed at its limit (swap): two orchestrators that set them
// differently run the same declaration under different policies.

// weightV1 reads cpu.shares (2–262144; 1024 is the kernel's default).
func weightV1(dir string) (int64, error) {
	file := filepath.Join(dir, "cpu.shares")
	w, err := readInt(file)
	if err != nil {
		return 0, err
	}
	if w <= 0 {
		return 0, fmt.Errorf("%s: %d is not a positive weight", file, w)
	}
	return w, nil
}

// weightV2 reads cpu.weight (1–10000; 100 is the kernel's default).
func weightV2(dir string) (int64, error) {
	file := filepath.Join(dir, "cpu.weight")
	w, err := readInt(file)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("cgroup %s has no cpu.weight: the cpu controller is not enabled for it (%w)", dir, err)
	}
	if err != nil {
		return 0, err
	}
	if w <= 0 {
		return 0, fmt.Errorf("%s: %d is not a positive weight", file, w)
	}
	return w, nil
}

// swapV1 is the swap a v1 cgroup may use beyond its memory limit:
// memory.memsw.limit_in_bytes bounds memory and swap together. memoryBytes
// is the cgroup's own memory limit (0 for none). accounted is false when
// the kernel keeps no per-cgroup swap account (booted without
// swapaccount=1: the memsw files are missing), and then the swap allowed
// is not known.
func swapV1(dir string, memoryBytes int64) (swap int64, accounted bool, err error) {
	file := filepath.Join(dir, "memory.memsw.limit_in_bytes")
	both, err := readInt(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, false, nil
	case err != nil:
		return 0, false, err
	case both >= unlimitedBytes:
		return -1, true, nil
	case memoryBytes == 0 || both < memoryBytes:
		// the kernel refuses memsw below the memory limit, so this is a
		// tree that cannot be, not a limit
		return 0, false, fmt.Errorf("%s: %d bytes of memory and swap against a memory limit of %d bytes", file, both, memoryBytes)
	}
	return both - memoryBytes, true, nil
}

// swapV2 reads memory.swap.max: "max" (-1, no limit) or bytes. It is missing
// where the kernel keeps no swap account, and then the swap is not known.
func swapV2(dir string) (swap int64, accounted bool, err error) {
	file := filepath.Join(dir, "memory.swap.max")
	s, err := readString(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, false, nil
	case err != nil:
		return 0, false, err
	case s == "max":
		return -1, true, nil
	}
	b, err := strconv.ParseInt(s, 10, 64)
	if err != nil || b < 0 {
		return 0, false, fmt.Errorf("%s: %q is neither max nor a byte count", file, s)
	}
	return b, true, nil
}
