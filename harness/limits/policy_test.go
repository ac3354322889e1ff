package limits

import (
	"strings"
	"testing"
)

// The weight and the swap allowance are read as the kernel holds them, and
// a swap account the kernel does not keep is "not known", never "none".
func TestForPIDReadsWeightAndSwap(t *testing.T) {
	scope := "nomad.slice/reserve.slice/a1.web.scope/"
	memsw := "memory/docker/abc/memory.memsw.limit_in_bytes"
	for _, c := range []struct {
		name      string
		files     map[string]string
		proc      string
		weight    int64
		swap      int64
		accounted bool
	}{
		{"v1 without swapaccount", v1Docker, v1DockerProc, 256, 0, false},
		{"v1 memsw twice the memory: as much swap again", merge(v1Docker, map[string]string{memsw: "536870912"}), v1DockerProc, 256, 256 << 20, true},
		{"v1 memsw equal to the memory: no swap", merge(v1Docker, map[string]string{memsw: "268435456"}), v1DockerProc, 256, 0, true},
		{"v1 memsw unlimited", merge(v1Docker, map[string]string{memsw: "9223372036854771712",
			"cpu,cpuacct/docker/abc/cpu.shares": "1024"}), v1DockerProc, 1024, -1, true},
		{"v2 no swap", v2Exec, v2ExecProc, 100, 0, true},
		{"v2 swap unlimited", merge(v2Exec, map[string]string{scope + "memory.swap.max": "max", scope + "cpu.weight": "39"}), v2ExecProc, 39, -1, true},
		{"v2 without a swap account", merge(v2Exec, map[string]string{scope + "memory.swap.max": ""}), v2ExecProc, 100, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			fakeHost(t, c.files, map[int]string{42: c.proc})
			e, err := ForPID(42)
			if err != nil {
				t.Fatal(err)
			}
			if e.CPUWeight != c.weight || e.SwapBytes != c.swap || e.SwapAccounted != c.accounted {
				t.Errorf("weight %d, swap %d bytes (accounted %v); want %d, %d (%v)", e.CPUWeight, e.SwapBytes, e.SwapAccounted, c.weight, c.swap, c.accounted)
			}
		})
	}
}

func TestForPIDRefusesAnUnreadableWeightOrSwap(t *testing.T) {
	scope := "nomad.slice/reserve.slice/a1.web.scope/"
	for _, c := range []struct {
		name  string
		files map[string]string
		proc  string
		want  []string
	}{
		{"v1 no cpu.shares", merge(v1Docker, map[string]string{"cpu,cpuacct/docker/abc/cpu.shares": ""}), v1DockerProc,
			[]string{"docker/abc/cpu.shares", "no such file"}},
		{"v1 zero shares", merge(v1Docker, map[string]string{"cpu,cpuacct/docker/abc/cpu.shares": "0"}), v1DockerProc,
			[]string{"cpu.shares: 0 is not a positive weight"}},
		{"v1 memsw below the memory limit", merge(v1Docker, map[string]string{"memory/docker/abc/memory.memsw.limit_in_bytes": "1048576"}), v1DockerProc,
			[]string{"memory.memsw.limit_in_bytes: 1048576 bytes of memory and swap against a memory limit of 268435456 bytes"}},
		{"v1 unreadable memsw", merge(v1Docker, map[string]string{"memory/docker/abc/memory.memsw.limit_in_bytes": "dir:"}), v1DockerProc,
			[]string{"memory.memsw.limit_in_bytes"}},
		{"v2 no cpu.weight", merge(v2Exec, map[string]string{scope + "cpu.weight": ""}), v2ExecProc,
			[]string{"has no cpu.weight", "cpu controller is not enabled"}},
		{"v2 unparsable memory.swap.max", merge(v2Exec, map[string]string{scope + "memory.swap.max": "1G"}), v2ExecProc,
			[]string{"memory.swap.max", `"1G" is neither max nor a byte count`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fakeHost(t, c.files, map[int]string{42: c.proc})
			e, err := ForPID(42)
			if err == nil {
				t.Fatalf("no error; read %+v", e)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
