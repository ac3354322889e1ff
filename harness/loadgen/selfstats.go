package loadgen

import (
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// The generator measures itself so a result can show it measured the
// application and not its own limits: lag is how late it sent requests
// that were due on a free connection, CPU how much of the machine it took.

const (
	// Lag is kept to 1 % (2 digits) up to an hour: a tail, not a spectrum.
	lagHighest = 3600 * 1000 * 1000
	lagDigits  = 2
)

func newLagHist() *hdr.Histogram { return hdr.New(histLowest, lagHighest, lagDigits) }

// lagUs is the histogram value of a lag: microseconds, clamped into range.
// Zero is a valid lag (sent the instant it could be).
func lagUs(lag time.Duration) int64 {
	us := lag.Microseconds()
	if us < 0 {
		return 0
	}
	return min(us, lagHighest)
}

// cpuMark takes the process's CPU time at the start of the measured window
// and at the end of the run.
type cpuMark struct {
	mu      sync.Mutex
	ok      bool
	from    time.Time
	cpuFrom time.Duration
	to      time.Time
	cpuTo   time.Duration
}

// markAt takes the window's starting point at `at`, unless done closes
// first (the run ended during the warm-up).
func (m *cpuMark) markAt(at time.Time, done <-chan struct{}) {
	if wait := time.Until(at); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-done:
			return
		}
	}
	cpu, ok := processCPU()
	m.mu.Lock()
	m.from, m.cpuFrom, m.ok = time.Now(), cpu, ok
	m.mu.Unlock()
}

func (m *cpuMark) end() {
	cpu, ok := processCPU()
	m.mu.Lock()
	m.to, m.cpuTo, m.ok = time.Now(), cpu, m.ok && ok
	m.mu.Unlock()
}

func (r *run) generatorStats(meas *recorder) GeneratorStats {
	var g GeneratorStats
	if n := meas.lag.TotalCount(); n > 0 {
		g.LagSamples = n
		g.LagP50Us, g.LagP99Us, g.LagMaxUs = meas.lag.ValueAtPercentile(50), meas.lag.ValueAtPercentile(99), meas.lag.Max()
		g.LagMeanUs = meas.lag.Mean()
	}
	m := &r.cpu
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ok && m.to.After(m.from) {
		g.CPUSeconds = (m.cpuTo - m.cpuFrom).Seconds()
		g.CPUCores = g.CPUSeconds / m.to.Sub(m.from).Seconds()
	}
	return g
}
