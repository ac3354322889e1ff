package loadgen

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Schedule is the pacer of an open-loop run: it describes the offered rate
// over the run as a cumulative request count, so that a connection can find
// the send time of any request index without keeping per-request state.
// Connections split the cumulative count between them (see attacker.go), which
// is how wrk2's per-connection constant-throughput schedule generalises to
// ramps.
type Schedule interface {
	// Duration is the length of the schedule; nothing is due at or after it.
	Duration() time.Duration
	// RateAt is the offered rate in requests per second at elapsed time t.
	RateAt(t time.Duration) float64
	// Hits is the number of requests due in [0, t).
	Hits(t time.Duration) float64
	// TimeOf is the elapsed time at which the cumulative count reaches h;
	// ok is false when the schedule ends before that.
	TimeOf(h float64) (t time.Duration, ok bool)
}

// Constant offers Rate requests per second for Dur. A zero Rate is an idle pad.
type Constant struct {
	Rate float64
	Dur  time.Duration
}

func (c Constant) Duration() time.Duration { return c.Dur }

func (c Constant) RateAt(t time.Duration) float64 {
	if t < 0 || t >= c.Dur {
		return 0
	}
	return c.Rate
}

func (c Constant) Hits(t time.Duration) float64 {
	t = clampDur(t, c.Dur)
	return c.Rate * t.Seconds()
}

func (c Constant) TimeOf(h float64) (time.Duration, bool) {
	if h < 0 {
		h = 0
	}
	if c.Rate <= 0 || h >= c.Hits(c.Dur) {
		return 0, false
	}
	return secondsToDur(h / c.Rate), true
}

// Linear ramps the rate linearly from From to To over Dur (Artillery's
// arrivalRate → rampTo).
type Linear struct {
	From, To float64
	Dur      time.Duration
}

func (l Linear) Duration() time.Duration { return l.Dur }

func (l Linear) slope() float64 {
	if l.Dur <= 0 {
		return 0
	}
	return (l.To - l.From) / l.Dur.Seconds()
}

func (l Linear) RateAt(t time.Duration) float64 {
	if t < 0 || t >= l.Dur {
		return 0
	}
	return l.From + l.slope()*t.Seconds()
}

func (l Linear) Hits(t time.Duration) float64 {
	s := clampDur(t, l.Dur).Seconds()
	return l.From*s + l.slope()*s*s/2
}

func (l Linear) TimeOf(h float64) (time.Duration, bool) {
	if h < 0 {
		h = 0
	}
	if h >= l.Hits(l.Dur) {
		return 0, false
	}
	if h == 0 {
		return 0, l.From > 0 || l.To > 0
	}
	// Root of slope/2·s² + From·s − h = 0 written as 2h/(From+√disc): unlike
	// the textbook form it stays exact when the slope is zero or negative.
	disc := l.From*l.From + 2*l.slope()*h
	if disc < 0 {
		disc = 0
	}
	den := l.From + math.Sqrt(disc)
	if den <= 0 {
		return 0, false
	}
	return secondsToDur(2 * h / den), true
}

// Phases runs schedules back to back; their cumulative counts add up.
type Phases struct {
	parts []Schedule
	start []time.Duration
	cum   []float64 // cum[i] is the count due before part i starts
	total time.Duration
}

// NewPhases concatenates schedules in order.
func NewPhases(parts ...Schedule) *Phases {
	p := &Phases{parts: parts}
	var at time.Duration
	var hits float64
	for _, s := range parts {
		p.start = append(p.start, at)
		p.cum = append(p.cum, hits)
		at += s.Duration()
		hits += s.Hits(s.Duration())
	}
	p.cum = append(p.cum, hits)
	p.total = at
	return p
}

func (p *Phases) Duration() time.Duration { return p.total }

func (p *Phases) part(t time.Duration) int {
	// The first part whose end lies after t holds t.
	return sort.Search(len(p.parts), func(i int) bool { return p.start[i]+p.parts[i].Duration() > t })
}

func (p *Phases) RateAt(t time.Duration) float64 {
	i := p.part(t)
	if t < 0 || i >= len(p.parts) {
		return 0
	}
	return p.parts[i].RateAt(t - p.start[i])
}

func (p *Phases) Hits(t time.Duration) float64 {
	if t <= 0 {
		return 0
	}
	i := p.part(t)
	if i >= len(p.parts) {
		return p.cum[len(p.parts)]
	}
	return p.cum[i] + p.parts[i].Hits(t-p.start[i])
}

func (p *Phases) TimeOf(h float64) (time.Duration, bool) {
	// The first part whose cumulative end exceeds h holds it; idle pads have
	// cum[i+1] == cum[i] and are skipped by the strict comparison.
	i := sort.Search(len(p.parts), func(i int) bool { return p.cum[i+1] > h })
	if i >= len(p.parts) {
		return 0, false
	}
	t, ok := p.parts[i].TimeOf(h - p.cum[i])
	if !ok {
		return 0, false
	}
	return p.start[i] + t, true
}

// Phase is one segment of a phase list: Dur at a rate going linearly from
// From to To (equal for a constant segment, both zero for an idle pad).
type Phase struct {
	Dur  time.Duration `json:"duration"`
	From float64       `json:"rate_from"`
	To   float64       `json:"rate_to"`
}

func (p Phase) schedule() Schedule {
	if p.From == p.To {
		return Constant{Rate: p.From, Dur: p.Dur}
	}
	return Linear{From: p.From, To: p.To, Dur: p.Dur}
}

func (p Phase) String() string {
	if p.From == p.To {
		return fmt.Sprintf("%s@%g", p.Dur, p.From)
	}
	return fmt.Sprintf("%s@%g->%g", p.Dur, p.From, p.To)
}

// ScheduleOf builds the pacer for a phase list.
func ScheduleOf(phases []Phase) Schedule {
	parts := make([]Schedule, len(phases))
	for i, p := range phases {
		parts[i] = p.schedule()
	}
	return NewPhases(parts...)
}

// ParsePhases reads "10s@100,20s@100->500,5s@0": comma-separated segments of
// duration@rate or duration@from->to.
func ParsePhases(spec string) ([]Phase, error) {
	var out []Phase
	for _, seg := range strings.Split(spec, ",") {
		seg = strings.TrimSpace(seg)
		if seg == "" {
			continue
		}
		durStr, rateStr, ok := strings.Cut(seg, "@")
		if !ok {
			return nil, fmt.Errorf("phase %q: want DURATION@RATE or DURATION@FROM->TO", seg)
		}
		d, err := ParseDuration(durStr)
		if err != nil {
			return nil, fmt.Errorf("phase %q: %w", seg, err)
		}
		if d <= 0 {
			return nil, fmt.Errorf("phase %q: duration must be positive", seg)
		}
		fromStr, toStr, ramp := strings.Cut(rateStr, "->")
		from, err := strconv.ParseFloat(strings.TrimSpace(fromStr), 64)
		if err != nil || from < 0 {
			return nil, fmt.Errorf("phase %q: bad rate %q", seg, fromStr)
		}
		to := from
		if ramp {
			to, err = strconv.ParseFloat(strings.TrimSpace(toStr), 64)
			if err != nil || to < 0 {
				return nil, fmt.Errorf("phase %q: bad rate %q", seg, toStr)
			}
		}
		out = append(out, Phase{Dur: d, From: from, To: to})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty phase list")
	}
	return out, nil
}

// ParseDuration accepts Go durations plus wrk's bare numbers (seconds) and
// its "2m"/"1h" forms, so wrk2 command lines keep working.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return secondsToDur(f), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bad duration %q", s)
	}
	return d, nil
}

func clampDur(t, max time.Duration) time.Duration {
	if t < 0 {
		return 0
	}
	if t > max {
		return max
	}
	return t
}

func secondsToDur(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
