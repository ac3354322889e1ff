package gates

import (
	"fmt"

	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// ServiceUse is the CPU the measured service's instances used over the
// measured period and the quota they were held to (Limit 0 when any task
// had none, so saturation cannot be told).
type ServiceUse struct {
	Used, Limit float64
	// Quota is set when an instance has a CFS quota of its own; Throttled
	// is then the lowest share of CFS periods in which such an instance's
	// quota ran out.
	Quota     bool
	Throttled float64
}

// SaturatedThrottledShare is the share of CFS periods in which an instance
// with a quota must have been throttled for the service to count as
// saturated: an average near the quota can hide bursts with idle time
// between them, in which a slower generator did cost the service work;
// throttled in most periods, the service had work waiting when its quota
// ran out.
const SaturatedThrottledShare = 0.5

// Saturated reports whether the service used at least share of its quota
// and, where the quota is a CFS quota, was throttled in most periods.
func (u ServiceUse) Saturated(share float64) bool {
	if u.Limit <= 0 || u.Used < share*u.Limit {
		return false
	}
	return !u.Quota || u.Throttled >= SaturatedThrottledShare
}

// String says what the service used, for gate details.
func (u ServiceUse) String() string {
	if u.Limit <= 0 {
		return fmt.Sprintf("the service used %.3g cores and has no CPU limit on every instance, so it cannot show it was saturated", u.Used)
	}
	s := fmt.Sprintf("the service used %.0f %% of its %.3g cores", 100*u.Used/u.Limit, u.Limit)
	if u.Quota {
		s += fmt.Sprintf(", throttled in %.0f %% of CFS periods (saturated needs %.0f %% of the cores and %.0f %% of periods)",
			100*u.Throttled, 100*SaturatedShare, 100*SaturatedThrottledShare)
	}
	return s
}

// ServiceUseOf adds up the CPU of the measured service's instances, those
// behind its endpoints: the other tasks of the application are not the
// service whose saturation excuses a slow generator.
func ServiceUseOf(cpu []results.TaskCPU, eps []orchestrator.Endpoint) ServiceUse {
	instances := map[string]bool{}
	for _, ep := range eps {
		if ep.Instance != "" {
			instances[ep.Instance] = true
		}
	}
	var u ServiceUse
	capped := true
	for _, t := range cpu {
		if instances[t.AllocID] {
			u.Used += t.Cores
			u.Limit += t.LimitCores
			capped = capped && t.LimitCores > 0
			if t.QuotaCores > 0 {
				if !u.Quota || t.ThrottledRatio < u.Throttled {
					u.Throttled = t.ThrottledRatio
				}
				u.Quota = true
			}
		}
	}
	if !capped {
		u.Limit = 0
	}
	return u
}
