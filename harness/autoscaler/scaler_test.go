package autoscaler

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/contract"
)

var policy = contract.Autoscale{Group: "web", Min: 1, Max: 4, TargetCPU: 0.7, Cooldown: 30 * time.Second, Evaluation: 10 * time.Second}

func TestDesiredIsTheTargetValueStrategy(t *testing.T) {
	for _, c := range []struct {
		count int
		value float64
		want  int
	}{
		{1, 140, 2},  // twice the target: twice the instances
		{1, 100, 2},  // ceil(1.43)
		{2, 70, 2},   // at target
		{2, 70.5, 2}, // within the 1 % dead band
		{3, 20, 1},   // ceil(0.86)
		{4, 300, 4},  // capped at max
		{1, 10, 1},   // floored at min
		{2, 0.0, 1},  // idle: to min
		{1, 1000, 4}, // far over: to max
	} {
		if got, _ := Desired(policy, c.count, c.value, DefaultThreshold); got != c.want {
			t.Errorf("Desired(count %d, %g %%) = %d, want %d", c.count, c.value, got, c.want)
		}
	}
}

type fakeMetric struct {
	value float64
	ok    bool
	err   error
}

func (m *fakeMetric) Read(context.Context) (float64, bool, error) { return m.value, m.ok, m.err }

type fakeTarget struct {
	count int
	err   error
}

func (f *fakeTarget) Count(context.Context) (int, error) { return f.count, nil }
func (f *fakeTarget) Scale(_ context.Context, to int) error {
	if f.err != nil {
		return f.err
	}
	f.count = to
	return nil
}

// The scaler acts on the metric, waits out its cooldown, does nothing
// without a sample, and records a scale that failed.
func TestScalerActsWaitsAndRecords(t *testing.T) {
	m, tg := &fakeMetric{value: 140, ok: true}, &fakeTarget{count: 1}
	s := &Scaler{Policy: policy, Metric: m, Target: tg}
	t0 := time.Unix(1000, 0)
	s.Evaluate(context.Background(), t0)
	if tg.count != 2 || len(s.Events()) != 1 || s.Events()[0].Reason != "scaling up because factor is 2.000000" {
		t.Fatalf("after 140 %% on 1: count %d, events %+v", tg.count, s.Events())
	}
	s.Evaluate(context.Background(), t0.Add(10*time.Second))
	if tg.count != 2 {
		t.Fatalf("scaled again within the cooldown: %d", tg.count)
	}
	s.Evaluate(context.Background(), t0.Add(31*time.Second))
	if tg.count != 4 {
		t.Fatalf("after the cooldown at 140 %% on 2: count %d, want 4", tg.count)
	}
	m.ok = false
	s.Evaluate(context.Background(), t0.Add(70*time.Second))
	if tg.count != 4 || s.Samples() != 3 {
		t.Fatalf("without a sample: count %d, samples %d; want 4 and 3", tg.count, s.Samples())
	}
	m.ok, m.value, tg.err = true, 10, errors.New("update out of sequence")
	s.Evaluate(context.Background(), t0.Add(100*time.Second))
	ev := s.Events()
	if last := ev[len(ev)-1]; last.From != 4 || last.To != 1 || last.Error != "update out of sequence" {
		t.Fatalf("a failed scale-in: %+v", last)
	}
	m.err = errors.New("connection refused")
	before := len(s.Events())
	s.Evaluate(context.Background(), t0.Add(200*time.Second))
	if len(s.Events()) != before {
		t.Fatalf("acted on a metric it could not read")
	}
}
