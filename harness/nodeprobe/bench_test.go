package nodeprobe

import (
	"net/http/httptest"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/limits"
)

// BenchmarkUsage is what a CPU sample costs the harness through a probe on
// 127.0.0.1 against the same read in this process, measured in the same
// run: the sampler reads every task once a second, so this bounds how many
// tasks a step can sample. Both sides (client and server) are this
// process, so the CPU it reports is the whole cost of a remote read.
func BenchmarkUsage(b *testing.B) {
	e, err := limits.ForPID(os.Getpid())
	if err != nil {
		b.Skipf("no readable cgroup: %v", err)
	}
	srv := httptest.NewServer(NewServer(Local{NodeName: "bench"}))
	defer srv.Close()
	remote := NewClient("bench", srv.URL)
	cost := func(n Node) (wall, cpu time.Duration) {
		const reads = 2000
		before, began := cpuTime(b), time.Now()
		for range reads {
			if _, err := n.Usage(ctx, e.CgroupPath); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(began) / reads, (cpuTime(b) - before) / reads
	}
	for b.Loop() {
		localWall, localCPU := cost(Local{})
		probeWall, probeCPU := cost(remote)
		b.ReportMetric(float64(localCPU)/1e3, "local-cpu-µs/read")
		b.ReportMetric(float64(probeCPU)/1e3, "probe-cpu-µs/read")
		b.ReportMetric(float64(probeWall)/1e3, "probe-wall-µs/read")
		b.ReportMetric(float64(probeCPU)/float64(localCPU), "probe/local-cpu")
		b.ReportMetric(float64(probeWall)/float64(localWall), "probe/local-wall")
	}
}

// cpuTime is this process's user and system time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
