package conformance

import (
	"maps"
	"math"
	"slices"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/pack"
)

// checkShape is what one rendered combination must hold on its own.
func checkShape(s shape, variant string, add func(string, string, ...any)) {
	measured := 0
	for _, app := range s.apps {
		if app.Name == "" {
			add(s.where, "job %s has no %s meta", app.Job, contract.KeyApp)
		}
		if app.Variant != variant {
			add(s.where, "job %s declares %s %q", app.Job, contract.KeyVariant, app.Variant)
		}
		if !app.Measured() {
			continue
		}
		measured++
		switch {
		case app.Probe.Path == "":
			add(s.where, "job %s declares no correctness probe (%s)", app.Job, contract.KeyProbePath)
		case app.Probe.MinBytes == 0 && (app.Probe.Regex == nil || app.Probe.Regex.MatchString("")):
			add(s.where, "job %s: the probe %s accepts an empty answer; declare %s or a %s that an empty body does not match",
				app.Job, app.Probe.Path, contract.KeyProbeMinBytes, contract.KeyProbeRegex)
		}
	}
	if measured != 1 {
		add(s.where, "%d jobs declare %s; exactly one holds the measured service", measured, contract.KeyService)
	}
	services, checked, scaled := 0, 0, false
	for _, key := range slices.Sorted(maps.Keys(s.tasks)) {
		t := s.tasks[key]
		scaled = scaled || t.service
		if t.measured {
			services++
			if t.checks > 0 {
				checked++
			}
		}
		switch t.intent.CPUMode {
		case contract.CPUModeCPUSet:
			if t.intent.Cores != math.Trunc(t.intent.Cores) || t.intent.Cores < 1 {
				add(s.where, "task %s reserves a cpuset of %s cores; a cpuset is whole cores", key, cores(t.intent.Cores))
			}
		case contract.CPUModeQuota:
			if t.driver == "docker" && !t.hardLimit {
				add(s.where, "task %s declares a CPU quota, but the docker driver enforces one only with cpu_hard_limit = true", key)
			}
			if s.mhzPerCore > 0 && math.Abs(float64(t.mhz)-t.intent.Cores*s.mhzPerCore) > 1 {
				add(s.where, "task %s declares %s cores but reserves %d MHz; at %v MHz per core that is %s cores, and the quota follows the MHz",
					key, cores(t.intent.Cores), t.mhz, s.mhzPerCore, cores(float64(t.mhz)/s.mhzPerCore))
			}
		}
		if t.driver == "exec" && t.intent.Cores >= 1 && t.intent.Cores == math.Trunc(t.intent.Cores) && t.intent.CPUMode != contract.CPUModeCPUSet {
			add(s.where, "task %s runs on exec with %s whole cores but does not reserve them as a cpuset (resources.cores), the only cap exec enforces", key, cores(t.intent.Cores))
		}
		if t.intent.MemoryMiB == 0 {
			add(s.where, "task %s has no memory limit", key)
		}
	}
	for _, app := range s.apps {
		if app.Scaled != "" && !scaled {
			add(s.where, "job %s declares %s %q, which no group registers in Consul", app.Job, contract.KeyScaled, app.Scaled)
		}
	}
	if services == 0 {
		add(s.where, "no group registers the measured service in Consul")
	} else if checked < services {
		add(s.where, "the measured service is registered without a health check")
	}
	if variant == "unlimited" {
		for _, key := range slices.Sorted(maps.Keys(s.tasks)) {
			if t := s.tasks[key]; t.service && (t.intent.Cores != 0 || t.intent.CPUMode != contract.CPUModeShares) {
				add(s.where, "task %s of the unlimited variant has a CPU cap (%s cores, %s)", key, cores(t.intent.Cores), t.intent.CPUMode)
			}
		}
	}
}

// checkProportions compares variants and scales of one driver.
func checkProportions(c Checker, p *pack.Pack, driver string, shapes map[string]shape, add func(string, string, ...any)) {
	base, ok := shapes["baseline"]
	if !ok {
		return
	}
	if vert, ok := shapes["vertical"]; ok {
		capped := 0
		for _, key := range slices.Sorted(maps.Keys(base.tasks)) {
			b, v := base.tasks[key], vert.tasks[key]
			if b.intent.Cores == 0 {
				continue
			}
			capped++
			if !near(v.intent.Cores, 2*b.intent.Cores) || math.Abs(float64(v.intent.MemoryMiB-2*b.intent.MemoryMiB)) > 1 {
				add(vert.where, "task %s: vertical %s cores, %d MiB is not twice baseline %s cores, %d MiB",
					key, cores(v.intent.Cores), v.intent.MemoryMiB, cores(b.intent.Cores), b.intent.MemoryMiB)
			}
			if v.count != b.count {
				add(vert.where, "task %s: vertical runs %d instances, baseline %d; vertical grows instances, not their number", key, v.count, b.count)
			}
		}
		if capped == 0 {
			add(base.where, "no task has a CPU cap, so vertical cannot be twice baseline")
		}
	}
	if horiz, ok := shapes["horizontal"]; ok {
		for _, key := range slices.Sorted(maps.Keys(base.tasks)) {
			b, h := base.tasks[key], horiz.tasks[key]
			if !near(h.intent.Cores, b.intent.Cores) || h.intent.MemoryMiB != b.intent.MemoryMiB {
				add(horiz.where, "task %s: horizontal instances (%s cores, %d MiB) differ from baseline's (%s cores, %d MiB)",
					key, cores(h.intent.Cores), h.intent.MemoryMiB, cores(b.intent.Cores), b.intent.MemoryMiB)
			}
			if b.service && h.count <= b.count {
				add(horiz.where, "task %s: horizontal runs %d instances of the measured service, baseline %d", key, h.count, b.count)
			}
		}
	}
	// scale sets the measured service's instances
	if scaled, ok := c.render(p, map[string]string{"variant": "baseline", "driver": driver, "scale": "3"}, add); ok {
		for _, key := range slices.Sorted(maps.Keys(scaled.tasks)) {
			if t := scaled.tasks[key]; t.service && t.count != 3 {
				add(scaled.where, "task %s runs %d instances", key, t.count)
			}
		}
	}
	// resource_scale shrinks every capped task's CPU in proportion
	half, ok1 := c.render(p, map[string]string{"variant": "baseline", "driver": driver, "resource_scale": "0.5"}, add)
	quarter, ok2 := c.render(p, map[string]string{"variant": "baseline", "driver": driver, "resource_scale": "0.25"}, add)
	if ok1 && ok2 {
		for _, key := range slices.Sorted(maps.Keys(half.tasks)) {
			h, q := half.tasks[key], quarter.tasks[key]
			if h.intent.Cores > 0 && !near(h.intent.Cores, 2*q.intent.Cores) {
				add(quarter.where, "task %s: %s cores at resource_scale 0.25 is not half of %s at 0.5", key, cores(q.intent.Cores), cores(h.intent.Cores))
			}
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
