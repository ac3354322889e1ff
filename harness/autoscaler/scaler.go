// Package autoscaler is orchbench's own autoscaler, for orchestrators that
// have none (Docker Swarm). It runs the one policy shape every orchestrator
// here can run (contract.Autoscale: a group's mean CPU held at a target
// share of its reservation) the way the Nomad Autoscaler's target-value
// strategy does, so the comparison is of orchestrators, not of algorithms:
// every evaluation, factor = metric / target; outside 1 ± Threshold the
// count becomes ceil(count × factor), within [min, max]; after an action
// nothing more is done for the cooldown.
package autoscaler

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/orchbench/orchbench/harness/contract"
)

// Metric reads the policy's metric now: the group's mean CPU as a
// percentage of its reservation. ok is false when the source holds no
// sample (the autoscaler then does nothing, as the Nomad Autoscaler does).
type Metric interface {
	Read(ctx context.Context) (value float64, ok bool, err error)
}

// Target is what is scaled: a Swarm service's replicas.
type Target interface {
	Count(ctx context.Context) (int, error)
	Scale(ctx context.Context, to int) error
}

// Event is one scaling action, or one that failed.
type Event struct {
	At     time.Time `json:"at"`
	From   int       `json:"from"`
	To     int       `json:"to"`
	Reason string    `json:"reason"`
	Error  string    `json:"error,omitempty"`
}

// DefaultThreshold is the target-value strategy's dead band.
const DefaultThreshold = 0.01

// Scaler evaluates one policy against one target.
type Scaler struct {
	Policy    contract.Autoscale
	Metric    Metric
	Target    Target
	Threshold float64
	// Log receives a line per evaluation that acted or failed.
	Log func(format string, args ...any)

	mu         sync.Mutex
	events     []Event
	samples    int
	lastAction time.Time
	lastErr    error
}

// Evaluate runs one evaluation at now.
func (s *Scaler) Evaluate(ctx context.Context, now time.Time) {
	value, ok, err := s.Metric.Read(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.lastErr = fmt.Errorf("metric: %w", err)
		s.logf("%s: %v", s.Policy.Group, s.lastErr)
		return
	}
	if !ok {
		return
	}
	s.samples++
	if !s.lastAction.IsZero() && now.Before(s.lastAction.Add(s.Policy.Cooldown)) {
		return
	}
	count, err := s.Target.Count(ctx)
	if err != nil {
		s.lastErr = fmt.Errorf("count: %w", err)
		s.logf("%s: %v", s.Policy.Group, s.lastErr)
		return
	}
	to, reason := Desired(s.Policy, count, value, s.threshold())
	if to == count {
		return
	}
	ev := Event{At: now, From: count, To: to, Reason: reason}
	if err := s.Target.Scale(ctx, to); err != nil {
		ev.Error = err.Error()
		s.lastErr = err
	}
	s.lastAction = now
	s.events = append(s.events, ev)
	s.logf("%s: %d -> %d (%s)%s", s.Policy.Group, ev.From, ev.To, reason, errSuffix(ev.Error))
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return ": " + e
}

func (s *Scaler) threshold() float64 {
	if s.Threshold > 0 {
		return s.Threshold
	}
	return DefaultThreshold
}

func (s *Scaler) logf(format string, args ...any) {
	if s.Log != nil {
		s.Log(format, args...)
	}
}

// Desired is the target-value strategy: the count that brings the metric
// (percent) to the policy's target, within [min, max].
func Desired(p contract.Autoscale, count int, value, threshold float64) (int, string) {
	target := p.TargetCPU * 100
	if count == 0 || target <= 0 {
		return max(count, p.Min), "below min"
	}
	factor := value / target
	if math.Abs(factor-1) <= threshold {
		return clamp(p, count), ""
	}
	to := clamp(p, int(math.Ceil(float64(count)*factor)))
	dir := "up"
	if to < count {
		dir = "down"
	}
	return to, fmt.Sprintf("scaling %s because factor is %f", dir, factor)
}

func clamp(p contract.Autoscale, n int) int { return min(max(n, p.Min), p.Max) }

// Run evaluates every Policy.Evaluation until ctx ends.
func (s *Scaler) Run(ctx context.Context) {
	t := time.NewTicker(s.Policy.Evaluation)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			s.Evaluate(ctx, now)
		}
	}
}

// Events are the actions so far, oldest first.
func (s *Scaler) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...)
}

// Samples counts the evaluations that had a metric value.
func (s *Scaler) Samples() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples
}
